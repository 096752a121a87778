/**
 * A `deno lint` rule: no function of the program (`src/`, `chat.ts`) longer
 * than 80 lines, so each can be read at once. Tables of data are objects, not
 * functions, and are not counted; tests, benches and tools are scripts and
 * are left alone.
 * @module
 */

/** The most lines one function may span, its signature and braces included. */
export const MAX_FUNCTION_LINES = 80;

const plugin: Deno.lint.Plugin = {
  name: "lms",
  rules: {
    "max-function-lines": {
      create(context) {
        const root = new URL("../../", import.meta.url).pathname;
        const path = context.filename.startsWith(root)
          ? context.filename.slice(root.length)
          : context.filename;
        if (!path.startsWith("src/") && path !== "chat.ts") return {};
        const check = (
          node:
            | Deno.lint.FunctionDeclaration
            | Deno.lint.FunctionExpression
            | Deno.lint.ArrowFunctionExpression,
        ) => {
          const [start, end] = node.range;
          const lines =
            context.sourceCode.text.slice(start, end).split("\n").length;
          if (lines > MAX_FUNCTION_LINES) {
            context.report({
              node,
              message:
                `function of ${lines} lines (at most ${MAX_FUNCTION_LINES})`,
              hint: "split it into named steps",
            });
          }
        };
        return {
          FunctionDeclaration: check,
          FunctionExpression: check,
          ArrowFunctionExpression: check,
        };
      },
    },
  },
};

export default plugin;
