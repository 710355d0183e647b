// One definition for the web page and the CLI (`svc agent logs`): see src/api/terminal-text.ts.
export {tail, terminalText} from '../../src/api/terminal-text.js'
