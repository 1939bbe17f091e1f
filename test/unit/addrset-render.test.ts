// What `nft -f -` is given for each op, in text and in JSON (the form for a
// table named by an nft keyword): the exact commands, and element changes
// that a later flush, re-creation or deletion of their set wipes are not sent
// (nft 1.0.6 refuses a delete of an element followed by a flush of its set).
import { describe, expect, it } from 'vitest';
import { parseEntry, type Entry } from '../../dist/addrset/addresses.js';
import type { Op } from '../../dist/addrset/index.js';
import { renderJson, renderText } from '../../dist/addrset/render.js';

const entry = (text: string): Entry => parseEntry(text) as Entry;
const ref = { family: 'inet', table: 't' } as const;
const base = { family: 'inet', table: 't' };

const EVERY_OP: Op[] = [
  { op: 'addTable' },
  { op: 'addRegistry', name: 'reg' },
  { op: 'createSet', name: 's4', family: 4 },
  { op: 'createSet', name: 's6', family: 6 },
  { op: 'addElements', name: 's4', elements: [entry('10.0.0.1'), entry('10.1.0.0/16')] },
  { op: 'deleteElements', name: 's6', elements: [entry('2001:db8::1')] },
  { op: 'putRecord', registry: 'reg', key: 'as4_x', comment: 'v1 o=me' },
  { op: 'deleteRecord', registry: 'reg', key: 'as6_y' },
  { op: 'flushSet', name: 'old' },
  { op: 'deleteSet', name: 'gone' },
];

describe('rendering a transaction for nft', () => {
  it('writes each op as nft text', () => {
    expect(renderText(ref, EVERY_OP)).toBe(
      [
        'add table inet t',
        'add set inet t reg { type ifname; }',
        'add set inet t s4 { type ipv4_addr; flags interval; }',
        'flush set inet t s4',
        'add set inet t s6 { type ipv6_addr; flags interval; }',
        'flush set inet t s6',
        'add element inet t s4 { 10.0.0.1, 10.1.0.0/16 }',
        'delete element inet t s6 { 2001:db8::1 }',
        'add element inet t reg { "as4_x" }',
        'delete element inet t reg { "as4_x" }',
        'add element inet t reg { "as4_x" comment "v1 o=me" }',
        'delete element inet t reg { "as6_y" }',
        'flush set inet t old',
        'delete set inet t gone',
        '',
      ].join('\n'),
    );
  });

  it('writes each op as nft JSON', () => {
    expect(JSON.parse(renderJson(ref, EVERY_OP))).toEqual({
      nftables: [
        { add: { table: { family: 'inet', name: 't' } } },
        { add: { set: { ...base, name: 'reg', type: 'ifname' } } },
        { add: { set: { ...base, name: 's4', type: 'ipv4_addr', flags: ['interval'] } } },
        { flush: { set: { ...base, name: 's4' } } },
        { add: { set: { ...base, name: 's6', type: 'ipv6_addr', flags: ['interval'] } } },
        { flush: { set: { ...base, name: 's6' } } },
        { add: { element: { ...base, name: 's4', elem: ['10.0.0.1', { prefix: { addr: '10.1.0.0', len: 16 } }] } } },
        { delete: { element: { ...base, name: 's6', elem: ['2001:db8::1'] } } },
        { add: { element: { ...base, name: 'reg', elem: ['as4_x'] } } },
        { delete: { element: { ...base, name: 'reg', elem: ['as4_x'] } } },
        { add: { element: { ...base, name: 'reg', elem: [{ elem: { val: 'as4_x', comment: 'v1 o=me' } }] } } },
        { delete: { element: { ...base, name: 'reg', elem: ['as6_y'] } } },
        { flush: { set: { ...base, name: 'old' } } },
        { delete: { set: { ...base, name: 'gone' } } },
      ],
    });
  });

  it('sends no element change to a set that is flushed, created or deleted later in the transaction, and nothing for no elements', () => {
    const ops: Op[] = [
      { op: 'addElements', name: 'a', elements: [entry('10.0.0.1')] },
      { op: 'deleteElements', name: 'a', elements: [entry('10.0.0.2')] },
      { op: 'flushSet', name: 'a' },
      { op: 'addElements', name: 'a', elements: [entry('10.0.0.3')] }, // after the flush: kept
      { op: 'deleteElements', name: 'b', elements: [entry('10.0.0.4')] },
      { op: 'createSet', name: 'b', family: 4 },
      { op: 'addElements', name: 'c', elements: [entry('10.0.0.5')] },
      { op: 'deleteSet', name: 'c' },
      { op: 'addElements', name: 'd', elements: [] },
      { op: 'deleteElements', name: 'd', elements: [] },
      { op: 'addElements', name: 'e', elements: [entry('10.0.0.6')] }, // another set's flush wipes nothing here
      { op: 'flushSet', name: 'f' },
    ];
    expect(renderText(ref, ops).split('\n')).toEqual([
      'flush set inet t a',
      'add element inet t a { 10.0.0.3 }',
      'add set inet t b { type ipv4_addr; flags interval; }',
      'flush set inet t b',
      'delete set inet t c',
      'add element inet t e { 10.0.0.6 }',
      'flush set inet t f',
      '',
    ]);
    expect(JSON.parse(renderJson(ref, ops)).nftables).toEqual([
      { flush: { set: { ...base, name: 'a' } } },
      { add: { element: { ...base, name: 'a', elem: ['10.0.0.3'] } } },
      { add: { set: { ...base, name: 'b', type: 'ipv4_addr', flags: ['interval'] } } },
      { flush: { set: { ...base, name: 'b' } } },
      { delete: { set: { ...base, name: 'c' } } },
      { add: { element: { ...base, name: 'e', elem: ['10.0.0.6'] } } },
      { flush: { set: { ...base, name: 'f' } } },
    ]);
  });

  it('sends every change to a set itself, however it is changed later: only element changes are wiped', () => {
    const ops: Op[] = [
      { op: 'createSet', name: 'a', family: 4 },
      { op: 'flushSet', name: 'a' },
      { op: 'deleteSet', name: 'a' },
    ];
    expect(renderText(ref, ops)).toBe('add set inet t a { type ipv4_addr; flags interval; }\nflush set inet t a\nflush set inet t a\ndelete set inet t a\n');
    expect(JSON.parse(renderJson(ref, ops)).nftables).toHaveLength(4);
  });

  it('writes an empty transaction as a blank line, and as no commands', () => {
    expect(renderText(ref, [])).toBe('\n');
    expect(renderJson(ref, [])).toBe('{"nftables":[]}');
  });
});
