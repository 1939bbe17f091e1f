// The lab as a picture for a test report: Mermaid (GitHub and most report
// viewers draw it inline) or Graphviz DOT (`dot -Tsvg` makes an SVG). Links
// carry their interfaces and addresses; an impaired direction says how; a
// link that is down is drawn dashed. Node keys are restricted to
// [A-Za-z0-9_-], so they are safe identifiers in both languages.
import type { LabPlan, PlannedEnd } from './plan.js';
import { describeImpairment, type Impairment } from './units.js';

/** What the picture shows of the running lab beyond its plan. */
export interface PictureState {
  /** Impairments by "from>to". */
  impairments: ReadonlyMap<string, Impairment>;
  /** Links that are down, by "a>b" as planned. */
  down: ReadonlySet<string>;
}

const SHAPES = {
  mermaid: { host: (k: string) => `${k}["${k}"]`, router: (k: string) => `${k}{{"${k}"}}`, switch: (k: string) => `${k}[/"${k}"/]` },
  dot: { host: 'box', router: 'hexagon', switch: 'diamond' },
} as const;

const endLabel = (end: PlannedEnd): string => [end.iface, ...end.addresses].join(' ');

function linkLabel(plan: LabPlan, index: number, state: PictureState): string {
  const { a, b } = plan.links[index]!;
  const parts = [`${a.node}: ${endLabel(a)}`, `${b.node}: ${endLabel(b)}`];
  for (const [from, to] of [[a.node, b.node], [b.node, a.node]]) {
    const impairment = state.impairments.get(`${from}>${to}`);
    if (impairment) parts.push(`${from}→${to}: ${describeImpairment(impairment)}`);
  }
  return parts.join(' | ');
}

/** The lab as a Mermaid flowchart. */
export function mermaid(plan: LabPlan, state: PictureState): string {
  const lines = ['graph LR'];
  for (const { key, kind } of plan.nodes) lines.push(`  ${SHAPES.mermaid[kind](key)}`);
  plan.links.forEach(({ a, b }, i) => {
    const arrow = state.down.has(`${a.node}>${b.node}`) ? '-.-' : '---';
    lines.push(`  ${a.node} ${arrow}|"${linkLabel(plan, i, state).replaceAll('"', "'")}"| ${b.node}`);
  });
  return `${lines.join('\n')}\n`;
}

/** The lab as a Graphviz graph (`dot -Tsvg lab.dot > lab.svg`). */
export function dot(plan: LabPlan, state: PictureState): string {
  const lines = ['graph lab {', '  node [fontname="monospace"];', '  edge [fontname="monospace", fontsize=9];'];
  for (const { key, kind } of plan.nodes) lines.push(`  "${key}" [shape=${SHAPES.dot[kind]}];`);
  plan.links.forEach(({ a, b }, i) => {
    const style = state.down.has(`${a.node}>${b.node}`) ? ', style=dashed' : '';
    lines.push(`  "${a.node}" -- "${b.node}" [label=${JSON.stringify(linkLabel(plan, i, state))}${style}];`);
  });
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
