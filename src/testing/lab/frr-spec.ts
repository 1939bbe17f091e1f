// A router's FRR spec, checked with the rest of the lab's spec, so that a bad
// one fails before anything is made (frr-config.ts makes the files from it).
import { ErrorCodes, kindOf, netnsError, type NetnsError } from '../../core/errors.js';
import { refuseUnknownKeys } from '../../core/known-keys.js';
import { own } from '../../core/own.js';

/** OSPF (v2, IPv4) on every interface of the router, all in area 0. */
export interface LabOspfSpec {
  /** Seconds between hellos (default 1; FRR's own default is 10). */
  hello?: number;
  /** Seconds without a hello before a neighbour is dead (default 4; FRR's own is 40). */
  dead?: number;
}

/** The daemons a router can run beside zebra. */
export type FrrDaemon = 'ospfd' | 'bgpd' | 'staticd';

/** FRR on a router: a generated OSPF configuration, or one given as is. */
export interface LabFrrSpec {
  /** Generate zebra + ospfd configuration for the router's subnets. */
  ospf?: LabOspfSpec;
  /** An FRR configuration (frr.conf text) given as is to every daemon; each ignores (and logs) the others' commands. */
  config?: string;
  /** The daemons to run beside zebra with `config` (default: those its `router ospf`, `router bgp`, `ip route` lines need). */
  daemons?: FrrDaemon[];
}

/** A router's FRR spec as checked: one of the two ways, with the defaults filled in. */
export type CheckedFrrSpec = { ospf: Required<LabOspfSpec> } | { config: string; daemons: FrrDaemon[] };

const DAEMONS: readonly FrrDaemon[] = ['ospfd', 'bgpd', 'staticd'];
const MAX_TIMER_S = 65535; // OSPF's hello and dead intervals are 16-bit seconds.

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, `createLab: ${message}`);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks router `key`'s `frr` (ERR_NETNS_INVALID_ARG naming the router and the field). */
export function checkFrrSpec(key: string, given: unknown): CheckedFrrSpec {
  const what = `router ${key}'s frr`;
  if (!isRecord(given)) throw invalid(`${what} must be an object { ospf } or { config, daemons? }, got ${kindOf(given)}`);
  const spec = own(given);
  refuseUnknownKeys(spec, ['ospf', 'config', 'daemons'], `createLab: ${what}`, invalid);
  if ((spec.ospf === undefined) === (spec.config === undefined)) throw invalid(`${what} takes one of ospf (generated) or config (as is)`);
  if (spec.ospf !== undefined) {
    if (spec.daemons !== undefined) throw invalid(`${what}: daemons go with config; ospf runs zebra and ospfd`);
    return { ospf: checkOspf(spec.ospf, `${what}.ospf`) };
  }
  if (typeof spec.config !== 'string' || spec.config.includes('\0')) throw invalid(`${what}.config must be the text of an FRR configuration, got ${kindOf(spec.config)}`);
  return { config: spec.config, daemons: checkDaemons(spec.daemons, spec.config, what) };
}

function checkOspf(given: unknown, what: string): Required<LabOspfSpec> {
  if (!isRecord(given)) throw invalid(`${what} must be an object { hello?, dead? }, got ${kindOf(given)}`);
  const ospf = own(given);
  refuseUnknownKeys(ospf, ['hello', 'dead'], `createLab: ${what}`, invalid);
  const [hello, dead] = [seconds(ospf.hello ?? 1, `${what}.hello`), seconds(ospf.dead ?? 4, `${what}.dead`)];
  if (dead <= hello) throw invalid(`${what}.dead (${dead} s) must be longer than hello (${hello} s), or neighbours die between hellos`);
  return { hello, dead };
}

function seconds(value: unknown, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_TIMER_S) throw invalid(`${what} must be whole seconds from 1 to ${MAX_TIMER_S}, got ${String(value)}`);
  return value as number;
}

function checkDaemons(given: unknown, config: string, what: string): FrrDaemon[] {
  if (given === undefined) return neededBy(config);
  if (!Array.isArray(given) || given.some((daemon) => !DAEMONS.includes(daemon as FrrDaemon))) {
    throw invalid(`${what}.daemons must be an array of ${DAEMONS.join(', ')} (zebra always runs), got ${JSON.stringify(given)}`);
  }
  return [...new Set(given as FrrDaemon[])];
}

/** The daemons a configuration's sections call for. */
function neededBy(config: string): FrrDaemon[] {
  const needs: [FrrDaemon, RegExp][] = [['ospfd', /^\s*router ospf\b/m], ['bgpd', /^\s*router bgp\b/m], ['staticd', /^\s*ipv?6? route\b/m]];
  return needs.filter(([, line]) => line.test(config)).map(([daemon]) => daemon);
}
