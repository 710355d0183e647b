export declare const MANIFEST_FILE: string
/** The manifest oclif would build from dist/cli.js, as JSON text. */
export declare function manifestText(): Promise<string>
/** Writes oclif.manifest.json when it changed; returns its text. */
export declare function writeManifest(): Promise<string>
