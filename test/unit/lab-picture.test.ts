// lab.picture(): the lab drawn for a test report, as Mermaid or Graphviz DOT.
// The exact text, since a viewer draws nothing from a near miss: each node's
// shape by kind, each link labelled with both ends' interfaces and addresses
// and each impaired direction, a link that is down dashed, and a quote in a
// label never closing it early. Pure: drawn from a plan, nothing built.
import { describe, expect, it } from 'vitest';
import { dot, mermaid, type PictureState } from '../../src/testing/lab/picture.js';
import { planLab } from '../../src/testing/lab/plan.js';
import { checkLabSpec } from '../../src/testing/lab/spec.js';

// A host on a switch with a router, the router linked straight to another host.
const plan = planLab(
  checkLabSpec({ hosts: { a: {}, b: {} }, routers: { r: {} }, switches: { s: {} }, links: [['a', 's'], ['r', 's'], ['r', 'b', { subnet6: 'fd09::/64' }]] }),
);
const calm: PictureState = { impairments: new Map(), down: new Set() };
// a→s impaired; r–b impaired both ways (listed a's way first: r→b, then b→r), one with a quote in it, and down.
const troubled: PictureState = {
  impairments: new Map([['a>s', { rate: '1mbit', delay: 20 }], ['b>r', { loss: 1 }], ['r>b', { rate: 'x"y' }]]),
  down: new Set(['r>b']),
};
const AS = 'a: eth0 10.0.1.1/24 fd00:0:0:1::1/64 | s: eth0';
const RS = 'r: eth0 10.0.1.2/24 fd00:0:0:1::2/64 | s: eth1';
const RB = 'r: eth1 10.0.2.1/24 fd09::1/64 | b: eth0 10.0.2.2/24 fd09::2/64';

describe('lab.picture(): Mermaid', () => {
  it('draws hosts as boxes, routers as hexagons, switches as parallelograms, and each link with its ends', () => {
    expect(mermaid(plan, calm)).toBe(
      ['graph LR', '  a["a"]', '  b["b"]', '  r{{"r"}}', '  s[/"s"/]', `  a ---|"${AS}"| s`, `  r ---|"${RS}"| s`, `  r ---|"${RB}"| b`, ''].join('\n'),
    );
  });

  it("adds each impaired direction, dashes a link that is down, and turns a label's double quote single", () => {
    expect(mermaid(plan, troubled)).toBe(
      [
        'graph LR', '  a["a"]', '  b["b"]', '  r{{"r"}}', '  s[/"s"/]',
        `  a ---|"${AS} | a→s: rate 1mbit, delay 20ms"| s`,
        `  r ---|"${RS}"| s`,
        `  r -.-|"${RB} | r→b: rate x'y | b→r: loss 1%"| b`,
        '',
      ].join('\n'),
    );
  });

  it('knows a link down only by its ends as planned (a>b), not reversed', () => {
    expect(mermaid(plan, { impairments: new Map(), down: new Set(['b>r']) })).toBe(mermaid(plan, calm));
  });
});

describe('lab.picture("dot"): Graphviz', () => {
  const head = ['graph lab {', '  node [fontname="monospace"];', '  edge [fontname="monospace", fontsize=9];', '  "a" [shape=box];', '  "b" [shape=box];', '  "r" [shape=hexagon];', '  "s" [shape=diamond];'];

  it('gives each kind its shape, and each link its label', () => {
    expect(dot(plan, calm)).toBe([...head, `  "a" -- "s" [label="${AS}"];`, `  "r" -- "s" [label="${RS}"];`, `  "r" -- "b" [label="${RB}"];`, '}', ''].join('\n'));
  });

  it('adds each impaired direction, dashes a link that is down, and escapes a quote', () => {
    expect(dot(plan, troubled)).toBe(
      [
        ...head,
        `  "a" -- "s" [label="${AS} | a→s: rate 1mbit, delay 20ms"];`,
        `  "r" -- "s" [label="${RS}"];`,
        `  "r" -- "b" [label="${RB} | r→b: rate x\\"y | b→r: loss 1%", style=dashed];`,
        '}',
        '',
      ].join('\n'),
    );
  });
});
