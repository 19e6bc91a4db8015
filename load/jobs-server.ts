// The one-replica server of the jobs benches (npm run bench:jobs-cpu, npm run jobs-interactive): the embedded
// queue in WORK/jobs-db, file:// destinations under WORK/out, one job at a time, sources from the loopback origin.
import { join } from 'node:path'
import { startServer, type ServerHandle } from './server-process.ts'

export function startJobsServer (work: string, originBase: string): Promise<ServerHandle> {
  return startServer({
    JOBS_DATA_DIR: join(work, 'jobs-db'),
    JOBS_DESTINATION_ROOT: join(work, 'out'),
    JOB_CONCURRENCY: '1',
    ALLOW_PRIVATE_SOURCES: 'true',
    ALLOWED_SOURCES: `${originBase}/`
  })
}
