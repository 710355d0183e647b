import {homedir} from 'node:os'
import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {credentialFor} from '../../src/cli/credentials.js'
import {AppError} from '../../src/api/app-error.js'
import {defaultStateDir} from '../../src/broker/identity.js'


export default class BrokerStart extends BaseCommand<null> {
  static override description = `Run a runtime broker in the foreground until SIGINT or SIGTERM.

The broker opens a tunnel to the Hub and runs the agents the Hub sends it. The first time, it joins in two phases: with --join-token (from \`svc broker register\`), or by registering itself with your credential. Its identity is kept in --state-dir and is valid on every replica of the deployment.

With several replicas, give every replica's URL (--hub a,b or --hub a --hub b) or one load-balanced URL: the broker holds one connection, to the first URL that answers, and moves to another when that replica goes away.`
  static override examples = ['<%= config.bin %> broker start --hub http://hub.example:9810', '<%= config.bin %> broker start --hub http://hub-a.example:9810,http://hub-b.example:9810', '<%= config.bin %> broker start --hub http://127.0.0.1:9810 --join-token svc_join_... --port 9801']
  static override flags = {
    hub: Flags.string({description: 'Hub URL; every replica\'s URL, comma-separated or repeated (or one load-balanced URL).', required: true, multiple: true}),
    name: Flags.string({description: 'Name of the broker (default: this host\'s name).'}),
    'join-token': Flags.string({description: 'Join token from `svc broker register` (or SVC_BROKER_JOIN_TOKEN).', env: 'SVC_BROKER_JOIN_TOKEN'}),
    'state-dir': Flags.string({description: 'Where the broker keeps its identity and agents (default ~/.svc/broker-<hub host>).'}),
    runtime: Flags.string({description: 'Runtime of new agents (default: the one chosen at this broker\'s first start: docker, else podman, else local, kept in --state-dir).', options: ['local', 'docker', 'podman', 'kubernetes']}),
    port: Flags.integer({description: 'Port of the local API.', default: 9800, min: 0, max: 65535}),
    host: Flags.string({description: 'Address of the local API.', default: '127.0.0.1'}),
    debug: Flags.boolean({description: 'Log at debug level.'}),
  }

  async execute(): Promise<null> {
    const {flags} = await this.parse(BrokerStart)
    const hubUrls: string[] = []
    for (const raw of flags.hub.flatMap((h) => h.split(',')).map((h) => h.trim()).filter(Boolean)) {
      const url = await this.endpoint(raw)
      if (!hubUrls.includes(url)) hubUrls.push(url)
    }
    if (!hubUrls.length) throw new AppError('usage_error', '--hub needs at least one Hub URL')
    const hubUrl = hubUrls[0]
    const {hostname} = await import('node:os')
    const {runStandaloneBroker} = await import('../../src/broker/standalone.js')
    await runStandaloneBroker(
      {
        hubUrls,
        name: flags.name ?? hostname(),
        stateDir: flags['state-dir'] ?? defaultStateDir(process.env.HOME || homedir(), hubUrls),
        host: flags.host,
        port: flags.port,
        runtime: flags.runtime,
        joinToken: flags['join-token'],
        userToken: hubUrls.map((u) => credentialFor(u)?.token).find(Boolean) ?? null,
        logLevel: flags.debug ? 'debug' : (process.env.SVC_LOG_LEVEL ?? 'info'),
      },
      (info) => {
        const line = {brokerId: info.brokerId, hub: hubUrl, hubs: hubUrls, localApi: info.localUrl, joined: info.joined}
        if (this.json) process.stdout.write(JSON.stringify(line) + '\n')
        else process.stderr.write(`svc broker ${info.brokerId} ${info.joined ? 'joined' : 'connecting to'} ${hubUrls.join(', ')}; local API ${info.localUrl ?? 'off'}\n`)
      },
    )
    return null
  }

  // Output is written when the broker is ready, not when the command returns.
  override async run(): Promise<null> {
    this.json = this.argv.includes('--json')
    return this.execute()
  }
}
