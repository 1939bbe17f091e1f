// Kernel numbers back to the names this API uses for them (scope 253 ->
// 'link'), computed once per table: parsing a dump asks for thousands.

/** A function giving the name of a value of `table`, or the value itself when it has none. */
export function namesOf<T extends Record<string, number>>(table: T): (value: number) => keyof T | number {
  const names = new Map<number, keyof T>();
  for (const name of Object.keys(table) as (keyof T)[]) if (!names.has(table[name]!)) names.set(table[name]!, name);
  return (value) => names.get(value) ?? value;
}
