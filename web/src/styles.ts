import {css} from 'lit'

/** Styles shared by the views (tables, forms, notices). */
export const shared = css`
  :host { display: block; font: 14px/1.45 system-ui, sans-serif; color: #1d232a; }
  h2 { font-size: 1.25rem; margin: 0 0 .75rem; }
  h3 { font-size: 1.05rem; margin: 0 0 .5rem; }
  table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #dde1e6; vertical-align: top; }
  th { font-weight: 600; background: #f4f6f8; }
  button { font: inherit; padding: .3rem .8rem; border: 1px solid #8a96a3; border-radius: 4px; background: #fff; cursor: pointer; }
  button.primary { background: #1f5fbf; border-color: #1f5fbf; color: #fff; }
  button:disabled { opacity: .5; cursor: default; }
  button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, a:focus-visible { outline: 2px solid #1f5fbf; outline-offset: 2px; }
  input, select, textarea { font: inherit; padding: .25rem .4rem; border: 1px solid #8a96a3; border-radius: 4px; }
  input[readonly], textarea[readonly] { background: #f4f6f8; color: #55606b; }
  textarea { width: 100%; box-sizing: border-box; font-family: ui-monospace, monospace; font-size: 12px; }
  .notice { padding: .5rem .75rem; border-radius: 4px; margin: .5rem 0; background: #eef4fc; border: 1px solid #b9cfee; }
  .error { background: #fdeeee; border-color: #eab3b3; color: #8a1c1c; }
  .ok { background: #edf8ef; border-color: #b4dcbc; color: #1c6a2b; }
  .muted { color: #55606b; }
  .needs-you.notice { background: #fff4d6; border-color: #e6b94a; color: #5c4100; font-weight: 600; }
  tr.needs-you { background: #fff8e5; }
  tr.failed { background: #fdeeee; }
  .badge.failed { display: inline-block; padding: 0 .4rem; border-radius: 3px; background: #b42318; color: #fff; font-size: .8em; font-weight: 600; }
  .badge.needs-you { display: inline-block; padding: 0 .4rem; border-radius: 3px; background: #b26b00; color: #fff; font-size: .8em; font-weight: 600; }
  .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
  .spaced { margin-top: .5rem; }
  .row.top { align-items: flex-start; gap: 2rem; }
  .grow { flex: 1; }
  .wide { min-width: 24rem; }
  .narrow { padding: 2rem; max-width: 32rem; }
  table.compact { width: auto; }
  pre.term { background: #10151b; color: #d9e1e8; padding: .6rem; white-space: pre-wrap; max-height: 28rem; overflow: auto; font: 12px/1.35 ui-monospace, monospace; }
  ul.plain { list-style: none; padding: 0; margin: 0 0 1rem; gap: .25rem; }
  button.link { border: none; background: none; color: #1f5fbf; text-decoration: underline; padding: .1rem .3rem; }
  .not-found { max-width: 36rem; margin: 2rem auto; padding: 1.25rem 1.5rem; border: 1px solid #c9d1da; border-radius: 6px; background: #f8fafc; }
  .not-found a.home { display: inline-block; padding: .3rem .8rem; border-radius: 4px; background: #16324f; color: #fff; text-decoration: none; }
  button.danger { border-color: #b42318; color: #b42318; }
  code { font-family: ui-monospace, monospace; font-size: 12px; }
`
