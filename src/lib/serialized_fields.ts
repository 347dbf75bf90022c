/**
 * Success fields already serialized (`"a":1,"b":[…]`, no braces), for responses
 * that reuse cached JSON of large shared objects (the event queue's messages).
 * Here, below both, so that the event queue can build them and the HTTP layer send them.
 */
export class SerializedFields {
  constructor(readonly json: string) {}
}
