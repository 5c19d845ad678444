// Asks for a password at the terminal without echo: the terminal in raw mode, the characters read
// one by one (Backspace and Ctrl-U edit, Enter ends, Ctrl-C or Ctrl-D on an empty line gives up),
// nothing written back but the prompt and the final newline. So the password never shows on the
// screen, in `ps` or in the shell's history.

/** The user gave up at the prompt (Ctrl-C, or Ctrl-D on an empty line). */
export class PromptCancelledError extends Error {
  constructor(readonly interrupted: boolean) {
    super(interrupted ? "interrupted" : "no password given");
    this.name = "PromptCancelledError";
  }
}

/** What the prompt needs of a terminal: process.stdin is one. */
export interface RawInput {
  setRawMode(on: boolean): unknown;
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export function askPassword(prompt: string, input: RawInput, write: (text: string) => void): Promise<string> {
  write(prompt);
  input.setRawMode(true);
  input.resume();
  let typed = "";
  return new Promise<string>((resolve, reject) => {
    const done = (outcome: () => void) => {
      input.off("data", onData);
      input.setRawMode(false);
      input.pause();
      write("\n");
      outcome();
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of typeof chunk === "string" ? chunk : chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") return done(() => resolve(typed));
        if (char === "\x03") return done(() => reject(new PromptCancelledError(true)));
        if (char === "\x04") {
          if (typed === "") return done(() => reject(new PromptCancelledError(false)));
          return done(() => resolve(typed));
        }
        if (char === "\x7f" || char === "\b") typed = [...typed].slice(0, -1).join("");
        else if (char === "\x15") typed = "";
        else if (char >= " ") typed += char;
      }
    };
    input.on("data", onData);
  });
}
