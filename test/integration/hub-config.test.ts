import {expect, it} from 'vitest'
import {BootstrapError} from '../../src/config/bootstrap.js'
import {describeEachDialect, startTestHub} from '../helpers/hub.js'

describeEachDialect('bootstrap values judged when the Hub is composed', (dialect) => {
  it('a session_ttl that is not a duration stops start-up naming the key', async () => {
    const files = {'.svc/settings.yaml': 'schema_version: "1"\nserver:\n  auth:\n    session_ttl: forever\n'}
    const err = await startTestHub(dialect, {files}).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(BootstrapError)
    expect((err as Error).message).toContain('server.auth.session_ttl')
    expect((err as Error).message).toContain('forever')
  })
})
