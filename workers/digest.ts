// piscina entry of the digest thread: hashes large sources while the main thread is still receiving them, so
// reading the socket and hashing run on two cores instead of one after the other. One task per source, many
// at once: a task spends its life waiting on its port. Every batch is acknowledged, so the sender can hold
// back when hashing falls behind instead of queueing the whole upload in memory.
// Its priority is set by src/plugins/digests.ts: the event loop's (hashing is intake; niced it held uploads back).
import './thread/niceness.ts'
import { createHash } from 'node:crypto'
import type { DigestMessage, DigestResult, DigestTask } from '../contract/digest.ts'

export default function digest ({ port, algorithms }: DigestTask): Promise<DigestResult> {
  const hashes = algorithms.map(algorithm => [algorithm, createHash(algorithm)] as const)
  return new Promise(resolve => {
    port.on('message', (message: DigestMessage) => {
      if (message === 'end') {
        resolve(Object.fromEntries(hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')])))
        port.close()
        return
      }
      for (const [, hash] of hashes) hash.update(message)
      // The acknowledgement hands the batch's memory back, to be filled again.
      port.postMessage(message.buffer, [message.buffer as ArrayBuffer])
    })
    port.once('close', () => resolve(null))
  })
}
