import {Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'

interface Started {
  url: string
  mode: string
  database: string
}

export default class ServerStart extends BaseCommand<Started | null> {
  static override description = `Run the Hub in the foreground until SIGINT or SIGTERM.

Workstation mode (the default) binds 127.0.0.1, writes ~/.svc/dev-token and uses the embedded database ~/.svc/hub.db. Hosted mode binds server.hub.host (default 0.0.0.0) and expects real sign-in.`
  static override examples = ['<%= config.bin %> server start', '<%= config.bin %> server start --hosted --config ./hub.yaml --port 8080']
  static override flags = {
    hosted: Flags.boolean({description: 'Run as a hosted Hub (same as server.mode: hosted).'}),
    config: Flags.string({description: 'Settings file to use (see docs/settings.md for how it combines with ~/.svc/settings.yaml).'}),
    port: Flags.integer({description: 'Port of the API and pages (server.hub.port, default 9810).', min: 0, max: 65535}),
    host: Flags.string({description: 'Address to bind (server.hub.host).'}),
    debug: Flags.boolean({description: 'Log at debug level (over SVC_LOG_LEVEL and server.log_level).'}),
  }

  async execute(): Promise<Started | null> {
    const {flags} = await this.parse(ServerStart)
    const {resolveBootstrap, BootstrapError} = await import('../../src/config/bootstrap.js')
    const {ConfigError} = await import('../../src/config/yaml-file.js')
    let bootstrap
    try {
      bootstrap = resolveBootstrap({hosted: flags.hosted, config: flags.config, port: flags.port, host: flags.host, debug: flags.debug})
    } catch (err) {
      if (err instanceof BootstrapError) throw new AppError('usage_error', err.message)
      if (err instanceof ConfigError) throw new AppError('config_invalid', err.message, {file: err.file, line: err.line, column: err.column, key: err.key})
      throw err
    }
    const {startServer} = await import('../../src/server-process.js')
    let started
    try {
      started = await startServer(bootstrap)
    } catch (err) {
      // Some values are only judged when the Hub is composed (e.g. server.auth.session_ttl).
      if (err instanceof BootstrapError) throw new AppError('usage_error', err.message)
      throw err
    }
    const result = {url: started.url, mode: bootstrap.mode, database: String(bootstrap.values['server.database.driver'])}
    if (this.json) process.stdout.write(JSON.stringify(result) + '\n')
    else process.stderr.write(`svc hub listening on ${started.url} (${bootstrap.mode}, ${result.database})\n`)
    await started.stopped
    return null
  }

  // Output is written when the Hub is ready, not when the command returns.
  override async run(): Promise<Started | null> {
    this.json = this.argv.includes('--json')
    return this.execute()
  }
}
