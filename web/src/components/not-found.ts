import {html} from 'lit'

/**
 * The "not found" view of an unknown route, agent or project: what was not found and a way
 * home, instead of a bare error line (styles: `.not-found` in styles.ts).
 */
export const notFoundView = (message: string) =>
  html`<section class="not-found" id="not-found" aria-labelledby="not-found-title">
    <h2 id="not-found-title">Not found</h2>
    <p>${message}</p>
    <p><a class="home" href="#/">Go to the home page</a></p>
  </section>`
