export declare const SHIM: string;
export declare function installShim(dir: string, name: string): string;
