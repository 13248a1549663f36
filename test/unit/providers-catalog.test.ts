import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  findProvider,
  providerCatalog,
  providerCatalogEntrySchema,
} from '../../src/shared/providers/catalog.js';

test('every entry matches the published schema, ids are unique', () => {
  for (const p of providerCatalog) providerCatalogEntrySchema.parse(p);
  assert.is(new Set(providerCatalog.map((p) => p.id)).size, providerCatalog.length);
});

test('the providers a user expects, with their protocol, address and key variable', () => {
  const row = (id: string) => {
    const p = findProvider(id);
    assert.ok(p, id);
    return [p!.protocol, p!.base_url, p!.key_env, p!.key_required];
  };
  assert.equal(row('openai'), ['openai', 'https://api.openai.com/v1', 'OPENAI_API_KEY', true]);
  assert.equal(row('anthropic'), [
    'anthropic',
    'https://api.anthropic.com',
    'ANTHROPIC_API_KEY',
    true,
  ]);
  assert.equal(row('deepseek'), [
    'openai',
    'https://api.deepseek.com/v1',
    'DEEPSEEK_API_KEY',
    true,
  ]);
  assert.equal(row('moonshot'), ['openai', 'https://api.moonshot.ai/v1', 'MOONSHOT_API_KEY', true]);
  assert.equal(row('qwen'), [
    'openai',
    'https://dashscope.aliyuncs.com/compatible-mode/v1',
    'DASHSCOPE_API_KEY',
    true,
  ]);
  assert.equal(row('gemini'), [
    'openai',
    'https://generativelanguage.googleapis.com/v1beta/openai',
    'GEMINI_API_KEY',
    true,
  ]);
  assert.equal(row('openrouter'), [
    'openai',
    'https://openrouter.ai/api/v1',
    'OPENROUTER_API_KEY',
    true,
  ]);
  assert.equal(row('ollama'), ['openai', 'http://127.0.0.1:11434/v1', null, false]);
  assert.equal(row('custom'), ['openai', null, 'CUSTOM_API_KEY', false]);
  assert.is(findProvider('custom')!.protocol_choosable, true);
  assert.is(findProvider('nope'), undefined);
});

test('every named provider suggests models; custom suggests none', () => {
  for (const p of providerCatalog) {
    if (p.id === 'custom') assert.equal(p.models, []);
    else assert.ok(p.models.length >= 2, `${p.id} suggests ${p.models.length} models`);
  }
});

test.run();
