// An impairment as users write it (tc's units: "10mbit", "20ms") and as the
// kernel takes it (bytes per second, microseconds, percent).
import { ErrorCodes, kindOf, netnsError, shownValue, type NetnsError } from '../../core/errors.js';
import { refuseUnknownKeys } from '../../core/known-keys.js';
import { own } from '../../core/own.js';

/**
 * What one direction of a link suffers. Rates are bits per second or tc's
 * text ("10mbit", "512kbit", "1gbit", "100kbps" for bytes); times are
 * milliseconds or text ("20ms", "500us", "1s"); loss and duplicate are
 * percent (0-100). delay, jitter and duplicate need the kernel's sch_netem;
 * rate and loss work without it.
 */
export interface Impairment {
  /** The most the link carries this way (a token bucket: tbf). */
  rate?: number | string;
  /** Added one-way delay. */
  delay?: number | string;
  /** Delay varies by up to this, either way (needs delay). */
  jitter?: number | string;
  /** Percent of packets dropped at random. */
  loss?: number;
  /** Percent of packets sent twice. */
  duplicate?: number;
}

/** An impairment in the kernel's units: bytes per second, microseconds, percent. */
export interface KernelImpairment {
  rateBytes?: number;
  delayUs?: number;
  jitterUs?: number;
  loss?: number;
  duplicate?: number;
}

const KEYS = ['rate', 'delay', 'jitter', 'loss', 'duplicate'];
// tc's units (tc/tc_util.c): "bit" units are bits, "bps" units are bytes.
const RATE_UNITS: Record<string, number> = { bit: 1, kbit: 1e3, mbit: 1e6, gbit: 1e9, tbit: 1e12, bps: 8, kbps: 8e3, mbps: 8e6, gbps: 8e9 };
const TIME_UNITS: Record<string, number> = { us: 1e-3, usec: 1e-3, ms: 1, msec: 1, s: 1e3, sec: 1e3 };
const MAX_RATE_BYTES = 2 ** 32 - 1; // tbf's 32-bit rate field: larger rates need the 64-bit attribute, not worth it for a lab
const MAX_TIME_MS = 3_600_000;

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, message);

function quantity(value: unknown, units: Record<string, number>, bare: string, what: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  const match = typeof value === 'string' ? /^(\d+(?:\.\d+)?)([a-z]+)$/i.exec(value.trim()) : null;
  const unit = match?.[2]!.toLowerCase();
  if (!match || unit === undefined || !Object.hasOwn(units, unit)) {
    throw invalid(`${what} must be a number (${bare}) or text with a unit (${Object.keys(units).join(', ')}), got ${shownValue(value)}`);
  }
  return Number(match[1]) * units[unit]!;
}

function percent(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) throw invalid(`${what} must be a percent from 0 to 100, got ${shownValue(value)}`);
  return value;
}

function rateBytes(value: unknown, what: string): number {
  const bytes = Math.round(quantity(value, RATE_UNITS, 'bits per second', what) / 8);
  if (bytes < 1 || bytes > MAX_RATE_BYTES) throw invalid(`${what} must be from 8bit to ${(MAX_RATE_BYTES * 8) / 1e9}gbit, got ${shownValue(value)}`);
  return bytes;
}

function microseconds(value: unknown, what: string): number {
  const ms = quantity(value, TIME_UNITS, 'milliseconds', what);
  if (ms > MAX_TIME_MS) throw invalid(`${what} must be at most an hour, got ${shownValue(value)}`);
  return Math.round(ms * 1000);
}

/** Checks an impairment as given (ERR_NETNS_INVALID_ARG naming `where`); returns its own properties. */
export function checkImpairment(given: unknown, where: string): Impairment {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw invalid(`impairment of ${where} must be an object { rate, delay, jitter, loss, duplicate }, got ${kindOf(given)}`);
  const impairment = own(given) as Impairment;
  refuseUnknownKeys(impairment, KEYS, `impairment of ${where}`, invalid);
  toKernelUnits(impairment, where);
  return impairment;
}

/** The impairment in the kernel's units; refuses what it cannot be (jitter without delay). */
export function toKernelUnits(impairment: Impairment, where: string): KernelImpairment {
  const out: KernelImpairment = {};
  if (impairment.rate !== undefined) out.rateBytes = rateBytes(impairment.rate, `rate of ${where}`);
  if (impairment.delay !== undefined) out.delayUs = microseconds(impairment.delay, `delay of ${where}`);
  if (impairment.jitter !== undefined) out.jitterUs = microseconds(impairment.jitter, `jitter of ${where}`);
  if (impairment.loss !== undefined) out.loss = percent(impairment.loss, `loss of ${where}`);
  if (impairment.duplicate !== undefined) out.duplicate = percent(impairment.duplicate, `duplicate of ${where}`);
  if (out.jitterUs !== undefined && out.delayUs === undefined) throw invalid(`jitter of ${where} needs a delay to vary around`);
  return out;
}

const BARE_UNITS: Record<string, string> = { rate: 'bit', delay: 'ms', jitter: 'ms', loss: '%', duplicate: '%' };

/** "rate 10mbit, delay 20ms, loss 1%": an impairment as listings print it, numbers with their unit. */
export function describeImpairment(impairment: Impairment): string {
  const parts = Object.entries(impairment)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key} ${String(value)}${typeof value === 'number' ? BARE_UNITS[key] : ''}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
