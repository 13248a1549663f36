import { isMap, type Document } from 'yaml';
import { slotNames, type Config } from '../shared/config/schema.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import { editConfig } from './config-writer.js';
import { ConfigError } from '../shared/config/load.js';

/**
 * The config.yml edits children may ask for. Each one edits, validates and writes the file, then
 * hands the new config to `changed` (which tells every child) before the request is answered.
 */
export function handleConfigEdits(
  endpoint: Endpoint,
  file: string,
  current: () => Config,
  changed: (c: Config) => void,
): void {
  const apply = (edit: (doc: Document) => void) => {
    let config: Config;
    try {
      config = editConfig(file, edit);
    } catch (err) {
      if (err instanceof ConfigError) throw new IpcCallError('invalid_request', err.message);
      throw err;
    }
    changed(config);
    return {};
  };

  endpoint.handle('config.models.create', ({ id, entry, key_from }) => {
    const models = current().models;
    if (Object.hasOwn(models, id))
      throw new IpcCallError(
        'conflict',
        `A model entry "${id}" exists already; PATCH it, or choose another id.`,
      );
    const withKey =
      key_from === undefined
        ? entry
        : { ...entry, api_key: keyOf(models, key_from, entry.provider) };
    return apply((doc) => {
      const list = doc.getIn(['models'], true);
      if (isMap(list)) list.flow = false; // `models: {}` written by hand grows as a block
      doc.setIn(['models', id], doc.createNode(defined(withKey)));
    });
  });

  endpoint.handle('config.models.update', ({ id, patch }) => {
    if (!Object.hasOwn(current().models, id))
      throw new IpcCallError('not_found', `There is no model entry "${id}".`);
    return apply((doc) => {
      for (const [key, value] of Object.entries(patch)) {
        if (value === undefined) continue;
        if (value === null) doc.deleteIn(['models', id, key]);
        else doc.setIn(['models', id, key], value);
      }
    });
  });

  endpoint.handle('config.models.delete', ({ id }) => {
    const config = current();
    if (!Object.hasOwn(config.models, id))
      throw new IpcCallError('not_found', `There is no model entry "${id}".`);
    const slots = slotNames.filter((s) => config.slots[s] === id);
    if (slots.length > 0) {
      throw new IpcCallError(
        'conflict',
        `"${id}" is the model of the ${slots.join(' and ')} slot${slots.length > 1 ? 's' : ''}; put another model in ${slots.length > 1 ? 'them' : 'it'} first.`,
      );
    }
    return apply((doc) => doc.deleteIn(['models', id]));
  });

  endpoint.handle('config.budgets.set', ({ budgets }) =>
    apply((doc) => {
      const set = defined(budgets);
      if (Object.keys(set).length === 0) doc.deleteIn(['budgets']);
      else doc.setIn(['budgets'], doc.createNode(set));
    }),
  );

  endpoint.handle('config.slots.set', ({ slot, model_id }) => {
    if (model_id !== null && !Object.hasOwn(current().models, model_id))
      throw new IpcCallError(
        'not_found',
        `There is no model entry "${model_id}" to put in the ${slot} slot.`,
      );
    return apply((doc) =>
      model_id === null ? doc.deleteIn(['slots', slot]) : doc.setIn(['slots', slot], model_id),
    );
  });
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The key saved with entry `from`, for a new entry of `provider`; refused when there is none to share. */
function keyOf(models: Config['models'], from: string, provider: string): string {
  const source = Object.hasOwn(models, from) ? models[from] : undefined;
  if (!source)
    throw new IpcCallError(
      'invalid_request',
      `api_key_from: there is no model entry "${from}"; GET /api/config/models lists them.`,
    );
  if (source.provider !== provider)
    throw new IpcCallError(
      'invalid_request',
      `api_key_from: "${from}" is a ${source.provider} entry; a key is shared only between entries of one provider (this one is ${provider}).`,
    );
  if (!source.api_key)
    throw new IpcCallError(
      'invalid_request',
      `api_key_from: "${from}" has no API key saved; send api_key instead.`,
    );
  return source.api_key;
}
