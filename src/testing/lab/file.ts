// A lab declared in a file, JSON or YAML (by its extension), as containerlab
// users keep their topologies: the LabSpec's keys, plus an optional `name`.
// YAML is read by the `yaml` package (a well-kept YAML 1.2 parser with no
// dependencies); its documents are plain data, never code or custom tags.
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parseDocument } from 'yaml';
import { ErrorCodes, kindOf, netnsError } from '../../core/errors.js';
import { LAB_KEY, type LabSpec } from './spec.js';

/** What a lab file holds: the spec, and the name it asks for (else its file name, without extension). */
export interface LabFile {
  name: string;
  spec: LabSpec;
}

/**
 * A YAML document as plain data: two equal keys are refused, and so is a tag
 * the schema does not know (the parser would only warn, and read it as text).
 */
function parseYaml(text: string, schema: 'json' | 'core'): unknown {
  const doc = parseDocument(text, { schema, uniqueKeys: true });
  const [problem] = [...doc.errors, ...doc.warnings.filter((warning) => warning.code === 'TAG_RESOLVE_FAILED')];
  if (problem) throw problem;
  return doc.toJS();
}

// JSON.parse keeps the last of two equal keys (a second `hosts` silently
// drops the first): JSON is also read as YAML 1.2, whose parser refuses them.
function parseJson(text: string): unknown {
  const data: unknown = JSON.parse(text);
  parseYaml(text, 'json');
  return data;
}

function parse(text: string, path: string): unknown {
  try {
    return extname(path) === '.json' ? parseJson(text) : parseYaml(text, 'core');
  } catch (error) {
    throw netnsError(ErrorCodes.INVALID_ARG, `lab file ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * Reads and parses a lab file (.json, or .yaml / .yml): ENOENT and the like
 * as Node gives them, ERR_NETNS_INVALID_ARG for a file that does not parse,
 * is not an object, or names the lab badly. The spec itself is checked by createLab.
 */
export function loadLabFile(path: string): LabFile {
  if (!['.json', '.yaml', '.yml'].includes(extname(path))) throw netnsError(ErrorCodes.INVALID_ARG, `lab file ${path}: name it .json, .yaml or .yml`);
  const data = parse(readFileSync(path, 'utf8'), path);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw netnsError(ErrorCodes.INVALID_ARG, `lab file ${path} must hold an object (hosts, links, ...), got ${kindOf(data)}`);
  const { name = basename(path, extname(path)), ...spec } = data as Record<string, unknown>;
  if (typeof name !== 'string' || !LAB_KEY.test(name)) throw netnsError(ErrorCodes.INVALID_ARG, `lab file ${path}: name must match ${LAB_KEY}, got ${JSON.stringify(name)}`);
  return { name, spec: spec as unknown as LabSpec };
}
