/** The models an Agent can switch between, each with the stream function that serves it. */
import type { ModelRoute } from '../types/run-config.js'
import type { ModelSpec } from '../types/model.js'
import type { StreamFn } from '../types/request.js'
import { sameModel } from './agent-reducer.js'

/** See the module comment. `streamFn` serves the current model. */
export class ModelRoutes {
  private readonly routes: ModelRoute[]
  streamFn: StreamFn

  constructor(
    model: ModelSpec,
    /** Serves models that no route names. */
    private readonly fallbackStreamFn: StreamFn,
    available: readonly ModelRoute[] = [],
  ) {
    this.streamFn = fallbackStreamFn
    this.routes = [...available]
    if (!this.routes.some((r) => sameModel(r.model, model))) this.routes.unshift({ model, streamFn: fallbackStreamFn })
  }

  /** The models, in cycling order. */
  get models(): ModelSpec[] {
    return this.routes.map((r) => r.model)
  }

  /** Switches to `model`: its route (added when new), or the current stream function for a model no route names. */
  select(model: ModelSpec | ModelRoute): ModelRoute {
    const route = 'streamFn' in model ? model : (this.routes.find((r) => sameModel(r.model, model)) ?? { model, streamFn: this.streamFn })
    this.streamFn = route.streamFn
    if (!this.routes.some((r) => sameModel(r.model, route.model))) this.routes.push(route)
    return route
  }

  /** The route after (or before) `current`'s. */
  next(current: ModelSpec, direction: 1 | -1): ModelRoute {
    const i = this.routes.findIndex((r) => sameModel(r.model, current))
    return this.routes[(i + direction + this.routes.length) % this.routes.length]!
  }

  /** After a replay: every model of the log gets a route (the fallback stream function where none was given), and `current` is selected. */
  adopt(models: readonly ModelSpec[], current: ModelSpec): void {
    for (const model of models) if (!this.routes.some((r) => sameModel(r.model, model))) this.routes.push({ model, streamFn: this.fallbackStreamFn })
    this.streamFn = this.routes.find((r) => sameModel(r.model, current))?.streamFn ?? this.fallbackStreamFn
  }
}
