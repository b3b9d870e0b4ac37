// The texts of list rows kept by version (src/http/row-texts.ts): what is kept, what is dropped, and when.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GENERATION_ROWS, RowTexts } from '../src/http/row-texts.ts';

test('a text is found only at its version, and only in its own list', () => {
  const texts = new RowTexts();
  texts.set('items', 'a', 'v1', '{"id":"a"}');
  assert.equal(texts.get('items', 'a', 'v1'), '{"id":"a"}');
  assert.equal(texts.get('items', 'a', 'v2'), undefined, 'another version of the row');
  assert.equal(texts.get('orders', 'a', 'v1'), undefined, 'another list');
});

test('two generations: the texts still read stay, the others go once two generations were filled after them', () => {
  const texts = new RowTexts();
  texts.set('items', 'read', 'v', 'read');
  texts.set('items', 'unread', 'v', 'unread');
  for (let i = 0; i < GENERATION_ROWS; i++) texts.set('items', `filler-${i}`, 'v', 'x');
  // The first generation is now the older one: both are still there, and reading one moves it to the newer.
  assert.equal(texts.get('items', 'read', 'v'), 'read');
  for (let i = 0; i < GENERATION_ROWS; i++) texts.set('items', `more-${i}`, 'v', 'x');
  assert.equal(texts.get('items', 'read', 'v'), 'read', 'read in the older generation: kept');
  assert.equal(texts.get('items', 'unread', 'v'), undefined, 'not read since: dropped with its generation');
  assert.equal(texts.get('items', 'filler-0', 'v'), undefined);
});
