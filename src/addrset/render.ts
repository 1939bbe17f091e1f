// Renders a transaction for `nft -f -`. Text is nft's fastest input (bulk
// element loads parse about twice as fast as JSON); JSON is used when the
// table's name is an nft keyword (e.g. "policy"), which nft 1.0.x text cannot
// name. Every value placed in text is one we produced and validated: set
// names and keys are [a-z0-9_], elements canonical addresses, comments
// [A-Za-z0-9_= -], the table name checked against nft itself.
import type { Entry } from './addresses.js';
import { unknownOp, type Op, type TableRef } from './ops.js';

const SET_TYPE = { 4: 'ipv4_addr', 6: 'ipv6_addr' } as const;

// nft 1.0.6 refuses a batch that deletes an element of an interval set and
// later flushes that set ("element does not exist"), which the kernel takes:
// requests made at once share a transaction (a replace, then a delete). Element
// changes that a later flush, re-creation or deletion of their set wipes change
// nothing, and are not sent.
function withoutWipedElementOps(ops: Op[]): Op[] {
  const wiped = new Set<string>();
  const sent: Op[] = [];
  for (let i = ops.length - 1; i >= 0; i--) {
    const op = ops[i]!;
    if ((op.op === 'addElements' || op.op === 'deleteElements') && wiped.has(op.name)) continue;
    if (op.op === 'flushSet' || op.op === 'createSet' || op.op === 'deleteSet') wiped.add(op.name);
    sent.push(op);
  }
  return sent.reverse();
}

export function renderText(ref: TableRef, ops: Op[]): string {
  const t = `${ref.family} ${ref.table}`;
  const lines = withoutWipedElementOps(ops).map((op) => {
    switch (op.op) {
      case 'addTable':
        return `add table ${t}`;
      case 'addRegistry':
        return `add set ${t} ${op.name} { type ifname; }`;
      case 'createSet':
        return `add set ${t} ${op.name} { type ${SET_TYPE[op.family]}; flags interval; }\nflush set ${t} ${op.name}`;
      case 'deleteSet':
        return `delete set ${t} ${op.name}`;
      case 'flushSet':
        return `flush set ${t} ${op.name}`;
      case 'addElements':
        return op.elements.length === 0 ? '' : `add element ${t} ${op.name} { ${texts(op.elements)} }`;
      case 'deleteElements':
        return op.elements.length === 0 ? '' : `delete element ${t} ${op.name} { ${texts(op.elements)} }`;
      case 'putRecord': // add first, so that the delete finds it: nft 1.0.6 has no "destroy"
        return [
          `add element ${t} ${op.registry} { "${op.key}" }`,
          `delete element ${t} ${op.registry} { "${op.key}" }`,
          `add element ${t} ${op.registry} { "${op.key}" comment "${op.comment}" }`,
        ].join('\n');
      case 'deleteRecord':
        return `delete element ${t} ${op.registry} { "${op.key}" }`;
      default:
        return unknownOp(op);
    }
  });
  return `${lines.filter(Boolean).join('\n')}\n`;
}

function texts(elements: Entry[]): string {
  return elements.map((entry) => entry.text).join(', ');
}

function jsonElement({ text }: Entry): unknown {
  const slash = text.indexOf('/');
  // Stryker disable next-line EqualityOperator: canonical text never starts with '/'
  return slash < 0 ? text : { prefix: { addr: text.slice(0, slash), len: Number(text.slice(slash + 1)) } };
}

export function renderJson(ref: TableRef, ops: Op[]): string {
  const base = { family: ref.family, table: ref.table };
  const commands = withoutWipedElementOps(ops).flatMap((op): unknown[] => {
    switch (op.op) {
      case 'addTable':
        return [{ add: { table: { family: ref.family, name: ref.table } } }];
      case 'addRegistry':
        return [{ add: { set: { ...base, name: op.name, type: 'ifname' } } }];
      case 'createSet':
        return [{ add: { set: { ...base, name: op.name, type: SET_TYPE[op.family], flags: ['interval'] } } }, { flush: { set: { ...base, name: op.name } } }];
      case 'deleteSet':
        return [{ delete: { set: { ...base, name: op.name } } }];
      case 'flushSet':
        return [{ flush: { set: { ...base, name: op.name } } }];
      case 'addElements':
      case 'deleteElements':
        if (op.elements.length === 0) return [];
        return [{ [op.op === 'addElements' ? 'add' : 'delete']: { element: { ...base, name: op.name, elem: op.elements.map(jsonElement) } } }];
      case 'putRecord': {
        const registry = { ...base, name: op.registry };
        return [
          { add: { element: { ...registry, elem: [op.key] } } },
          { delete: { element: { ...registry, elem: [op.key] } } },
          { add: { element: { ...registry, elem: [{ elem: { val: op.key, comment: op.comment } }] } } },
        ];
      }
      case 'deleteRecord':
        return [{ delete: { element: { ...base, name: op.registry, elem: [op.key] } } }];
      default:
        return unknownOp(op);
    }
  });
  return JSON.stringify({ nftables: commands });
}
