import type {Migration} from 'kysely'
import * as m0001 from './0001-foundation.js'
import * as m0002 from './0002-agents-brokers.js'
import * as m0003 from './0003-artifacts.js'
import * as m0004 from './0004-messages.js'
import * as m0005 from './0005-settings-sections.js'
import * as m0006 from './0006-project-annotations.js'
import * as m0007 from './0007-project-secrets.js'
import * as m0008 from './0008-delegation-edges.js'
import * as m0009 from './0009-delegation-adoptions.js'
import * as m0010 from './0010-broker-nonces.js'
import * as m0011 from './0011-user-hub-roles.js'
import * as m0012 from './0012-adoption-original-covering.js'
import * as m0013 from './0013-agent-config-facts.js'
import * as m0014 from './0014-real-agents.js'
import * as m0015 from './0015-agent-events.js'
import * as m0016 from './0016-project-clone-url.js'
import * as m0017 from './0017-agent-parent.js'
import * as m0018 from './0018-agent-event-error.js'
import * as m0019 from './0019-agent-limits.js'
import * as m0020 from './0020-agent-attempts.js'
import * as m0021 from './0021-approvals.js'
import * as m0023 from './0023-agent-ports.js'
import * as m0025 from './0025-broker-leases.js'
import * as m0027 from './0027-replica-directory.js'
import * as m0028 from './0028-queued-messages.js'
import * as m0029 from './0029-adoption-pass-indexes.js'
import * as m0030 from './0030-planner-agents-covering.js'
import * as m0031 from './0031-adoption-reserved.js'

/** Migrations in order; names sort lexically, so keep the four-digit prefix. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-agents-brokers': m0002,
  '0003-artifacts': m0003,
  '0004-messages': m0004,
  '0005-settings-sections': m0005,
  '0006-project-annotations': m0006,
  '0007-project-secrets': m0007,
  '0008-delegation-edges': m0008,
  '0009-delegation-adoptions': m0009,
  '0010-broker-nonces': m0010,
  '0011-user-hub-roles': m0011,
  '0012-adoption-original-covering': m0012,
  '0013-agent-config-facts': m0013,
  '0014-real-agents': m0014,
  '0015-agent-events': m0015,
  '0016-project-clone-url': m0016,
  '0017-agent-parent': m0017,
  '0018-agent-event-error': m0018,
  '0019-agent-limits': m0019,
  '0020-agent-attempts': m0020,
  '0021-approvals': m0021,
  '0023-agent-ports': m0023,
  '0025-broker-leases': m0025,
  '0027-replica-directory': m0027,
  '0028-queued-messages': m0028,
  '0029-adoption-pass-indexes': m0029,
  '0030-planner-agents-covering': m0030,
  '0031-adoption-reserved': m0031,
}
