/**
 * Terminal bytes as plain text for a <pre>: escape sequences (CSI, OSC, charset selection) are
 * dropped and carriage returns that rewrite a line keep its last version. The page shows output;
 * it is not a terminal emulator (full-screen programs look rough, but text output reads well).
 * Shared by the web page and `svc agent logs` (human and --json output).
 */
export function terminalText(s: string): string {
  const plain = s
    .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '')
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b[()][0-9A-Za-z]/g, '')
    .replace(/\x1b[=>78DEHMNOZc]/g, '')
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '')
  return plain
    .split('\n')
    .map((line) => {
      const parts = line.split('\r').filter((p) => p !== '')
      return parts.length ? parts[parts.length - 1] : ''
    })
    .join('\n')
}

/** Keeps the tail of a growing text. */
export const tail = (s: string, max = 200_000) => (s.length > max ? s.slice(s.length - max) : s)
