// Lab specs more than one test file builds.
import type { LabSpec } from '../../dist/testing.js';

/** The README's lab: two switched subnets (a, b on s1; c on s2) joined by two routers over a third, IPv6 included. */
export function routedLab(prefix: string): LabSpec {
  return {
    prefix,
    hosts: { a: {}, b: {}, c: {} },
    switches: { s1: {}, s2: {} },
    routers: { r1: {}, r2: {} },
    links: [['a', 's1'], ['b', 's1'], ['r1', 's1'], ['r1', 'r2'], ['r2', 's2'], ['c', 's2']],
  };
}
