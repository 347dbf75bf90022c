/**
 * Success fields already serialized (`"a":1,"b":[…]`, no braces), for responses
 * that reuse cached JSON of large shared objects (the event queue's messages).
 */
export class SerializedFields {
  constructor(readonly json: string) {}
}
