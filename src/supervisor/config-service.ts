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

  endpoint.handle('config.models.create', ({ id, entry }) => {
    if (Object.hasOwn(current().models, id))
      throw new IpcCallError(
        'conflict',
        `A model entry "${id}" exists already; PATCH it, or choose another id.`,
      );
    return apply((doc) => {
      const models = doc.getIn(['models'], true);
      if (isMap(models)) models.flow = false; // `models: {}` written by hand grows as a block
      doc.setIn(['models', id], doc.createNode(defined(entry)));
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
