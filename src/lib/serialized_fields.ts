/**
 * Success fields already serialized (`"a":1,"b":[…]`, no braces), for responses
 * that reuse cached JSON of large shared objects (the event queue's messages).
 * Here, below both, so that the event queue can build them and the HTTP layer send them.
 */
export class SerializedFields {
  /**
   * The whole success body (`{"result":"success","msg":"",…}`), made by the first
   * answer that needs it: an answer kept between requests (GET /users/me's) is then
   * one flat string for every request, not a new concatenation each time that the
   * engine copies again when the Response reads it.
   */
  private body: string | undefined = undefined;

  constructor(readonly json: string) {}

  successBody(): string {
    return (this.body ??= `{"result":"success","msg":"",${this.json}}`);
  }
}
