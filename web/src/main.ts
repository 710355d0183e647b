// The Hub's web client: one custom element per file under components/, routes in the URL hash.
import './components/svc-app.js'
