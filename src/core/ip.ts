// isIP, isIPv4 and isIPv6 with node:net's answers, without loading node:net
// (with its streams, a few ms of a one-command CNI plugin's start). The
// grammar is Node's own (lib/internal/net.js, unchanged from Node 20 to 26):
// dotted quads without leading zeros; IPv6 of 1-4 hex digit groups, one `::`
// at most, an embedded dotted quad last, a zone of letters, digits, `-`, `.`
// and `:`. Not ipaddr.js, whose load (~7 ms for an ES module importer, it
// being CommonJS) `import('netns/cni')` would then pay, and which reads more
// forms (0x and octal parts, five-digit groups) than node:net. A unit test
// compares the three with node:net's over a corpus of tricky inputs.
const V4_SEG = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4 = `(?:${V4_SEG}\\.){3}${V4_SEG}`;
const V6_SEG = '(?:[0-9a-fA-F]{1,4})';
const IPV4 = new RegExp(`^${V4}$`);
const IPV6 = new RegExp(
  '^(?:' +
    `(?:${V6_SEG}:){7}(?:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){6}(?:${V4}|:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){5}(?::${V4}|(?::${V6_SEG}){1,2}|:)|` +
    `(?:${V6_SEG}:){4}(?:(?::${V6_SEG}){0,1}:${V4}|(?::${V6_SEG}){1,3}|:)|` +
    `(?:${V6_SEG}:){3}(?:(?::${V6_SEG}){0,2}:${V4}|(?::${V6_SEG}){1,4}|:)|` +
    `(?:${V6_SEG}:){2}(?:(?::${V6_SEG}){0,3}:${V4}|(?::${V6_SEG}){1,5}|:)|` +
    `(?:${V6_SEG}:){1}(?:(?::${V6_SEG}){0,4}:${V4}|(?::${V6_SEG}){1,6}|:)|` +
    `(?::(?:(?::${V6_SEG}){0,5}:${V4}|(?::${V6_SEG}){1,7}|:))` +
    ')(?:%[0-9a-zA-Z-.:]{1,})?$',
);

/** As node:net's isIPv4. */
export const isIPv4 = (text: string): boolean => IPV4.test(text);

/** As node:net's isIPv6 (a zone allowed). */
export const isIPv6 = (text: string): boolean => IPV6.test(text);

/** As node:net's isIP: 4, 6, or 0 for neither. */
export const isIP = (text: string): 0 | 4 | 6 => (isIPv4(text) ? 4 : isIPv6(text) ? 6 : 0);
