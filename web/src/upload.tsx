/**
 * File uploads through tus (/api/v1/tus, with the session cookie and the CSRF token):
 * in chunks, resumable after a dropped connection (tus-js-client retries from the
 * offset the server has), with a progress bar; the link goes into the message as
 * `[name](url)`. A failed upload can be retried from where it stopped, and one cut
 * short by a reload resumes when the same file is picked again.
 */
import { useRef, useState } from "preact/hooks";
import { Upload } from "tus-js-client";
import { csrfToken } from "./api";

const markdownLink = (name: string, url: string) => `[${name.replace(/[[\]]/g, "")}](${url})`;

/** `pickRef` lets the compose box hand over files pasted or dropped into it. */
export function Uploader({ onUploaded, onError, pickRef }: { onUploaded(link: string): void; onError(text: string): void; pickRef?: { current: ((file: File) => void) | null } }) {
  const input = useRef<HTMLInputElement>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [failed, setFailed] = useState<Upload | null>(null);

  const start = (upload: Upload) => {
    setFailed(null);
    setProgress(0);
    upload.start();
  };

  const pick = (file: File) => {
    const upload: Upload = new Upload(file, {
      endpoint: "/api/v1/tus/",
      chunkSize: 5 * 1024 * 1024,
      // Then it gives up and the "Retry upload" button goes on from the server's offset.
      retryDelays: [0, 1000, 3000, 5000],
      metadata: { filename: file.name, filetype: file.type || "application/octet-stream" },
      headers: { "X-CSRFToken": csrfToken() },
      removeFingerprintOnSuccess: true,
      onProgress: (sent, total) => setProgress(total ? sent / total : 0),
      onError: (e) => {
        setProgress(null);
        setFailed(upload);
        onError(`Upload of ${file.name} failed: ${String((e as any)?.originalResponse?.getBody?.() || e.message)}`);
      },
      onSuccess: (payload) => {
        setProgress(null);
        let url = upload.url ?? "";
        try {
          url = JSON.parse(payload.lastResponse.getBody()).url ?? url;
        } catch {
          // tus servers need not answer with a body; Hearth does.
        }
        onUploaded(markdownLink(file.name, url));
      },
    });
    // The same file picked again after a reload goes on where the last try stopped
    // (tus-js-client keeps each unfinished upload's URL under the file's fingerprint).
    void upload
      .findPreviousUploads()
      .then((previous) => previous[0] && upload.resumeFromPreviousUpload(previous[0]))
      .catch(() => {})
      .then(() => start(upload));
  };
  if (pickRef) pickRef.current = pick;

  return (
    <span class="uploader">
      <input ref={input} type="file" hidden aria-label="File to upload" onChange={(e) => {
        const file = e.currentTarget.files?.[0];
        e.currentTarget.value = "";
        if (file) pick(file);
      }} />
      <button type="button" class="attach" title="Attach a file" aria-label="Attach a file" onClick={() => input.current?.click()}>📎</button>
      {progress !== null && <progress max={1} value={progress} aria-label="Upload progress" />}
      {failed && <button type="button" class="retry-upload" onClick={() => start(failed)}>Retry upload</button>}
    </span>
  );
}
