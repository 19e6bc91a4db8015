// The paths the app serves and their methods, collected as routes are added, so that a request no route
// takes can be told apart: a known path asked with the wrong method (405, with Allow) or no such path (404).
// Fastify's router answers only "not found" for both; find-my-way is not exposed to ask it by path.
import type { FastifyInstance } from 'fastify'

export interface KnownRoutes {
  /** The methods some route takes for this concrete path ([] if none), e.g. ['POST'] for /api/thumbnail. */
  methodsOf (path: string): string[]
}

/** A route's URL pattern as a test on concrete paths: ':name' is one segment, '*' the rest of the path. */
function matcher (url: string): RegExp {
  const pattern = url.split(/(:[^/]+|\*)/).map(part => part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('')
  return new RegExp(`^${pattern}$`)
}

/** Starts collecting: call before the routes are registered (onRoute sees only routes added after it). */
export function knownRoutes (app: FastifyInstance): KnownRoutes {
  const routes: Array<{ test: RegExp, methods: string[] }> = []
  app.addHook('onRoute', ({ url, method }) => {
    routes.push({ test: matcher(url), methods: [method].flat() })
  })
  return {
    methodsOf (path) {
      const methods = new Set(routes.filter(route => route.test.test(path)).flatMap(route => route.methods))
      return [...methods].sort()
    }
  }
}
