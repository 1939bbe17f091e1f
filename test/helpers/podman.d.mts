export interface PodmanOutput {
  stdout: string;
  stderr: string;
}
/** Runs podman with these arguments. */
export type Podman = (...args: string[]) => Promise<PodmanOutput>;
export type Exec = (command: string, args: string[], options: { env: NodeJS.ProcessEnv }) => Promise<PodmanOutput>;

export declare const havePodman: boolean;
export declare function confinedPodman(dir: string, options: { pluginDir: string; env?: NodeJS.ProcessEnv; exec?: Exec }): Podman;
export declare function writeNetwork(dir: string, name: string, plugins: object[]): void;
export declare function installCniPtp(pluginDir: string, plugin: string, residentName?: string): void;
export declare function importBusybox(podman: Podman, dir: string, image: string, tools: string[], files?: Record<string, string>): Promise<void>;
export declare function removePodman(podman: Podman, dir: string): Promise<void>;
