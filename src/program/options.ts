/**
 * Options declared once, a row each: the parser, variables, `--help`, docs' table and type follow.
 * @module
 */

import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import {
  isWithin,
  type WholeLimit,
  type WholeRange,
  wholeRangeText,
} from "../limits/whole_range.ts";

/** A flag or value the program cannot start with; exits 2. */
export class UsageError extends Error {}

/** A value its parser refuses; the reader adds where it came from. */
export class InvalidValue extends Error {
  constructor(message: string, readonly raw: string) {
    super(message);
  }
}

export interface OptionVariable {
  /** `LMS_...`, or `PORT`. */
  readonly name: string;
  /** Read by `serve.ts` under `deno serve`, which takes no flags. */
  readonly serve?: boolean;
  /** Read by `main.ts` when the flag is not given. */
  readonly fallback?: boolean;
}

export interface OptionRow {
  /** The flag's name, without `--`. */
  readonly flag: string;
  readonly variable?: OptionVariable;
  readonly help: string;
}

/** One option of the table; `T` is its parsed value. */
export interface Option<T> extends OptionRow {
  readonly kind: "value" | "switch" | "list";
  /** What follows `=` in `--help`: `N`, `B/S`; empty for a switch. */
  readonly placeholder: string;
  /** The values it takes, in words, if more than its placeholder says. */
  readonly values?: string;
  /** The default, as `--help` and the docs show it. */
  readonly shownDefault: string;
  /** The value of the raw texts given (none when not given); throws {@linkcode InvalidValue}. */
  read(given: readonly string[]): T;
}

/** What a value option's parser says: how it reads a text, and its default. */
export interface ValueParser<T> {
  readonly placeholder: string;
  readonly values?: string;
  readonly default: T;
  /** The default as shown, when `String(default)` would not do. */
  readonly shownDefault?: string;
  parse(raw: string): T;
}

/** An option that takes one value: the last one given wins. */
export function valueOption<T>(row: OptionRow & ValueParser<T>): Option<T> {
  return {
    ...row,
    kind: "value",
    shownDefault: row.shownDefault ?? String(row.default),
    read: (given) =>
      given.length === 0 ? row.default : row.parse(given.at(-1)!),
  };
}

/** A flag without a value, off unless given; its variable is `1` or `0`. */
export function switchOption(row: OptionRow): Option<boolean> {
  return {
    ...row,
    kind: "switch",
    placeholder: "",
    values: row.variable ? "the variable: 1 or 0" : undefined,
    shownDefault: "off",
    read(given) {
      const raw = given.at(-1);
      if (raw !== undefined && raw !== "0" && raw !== "1") {
        throw new InvalidValue("must be 0 or 1", raw);
      }
      return raw === "1";
    },
  };
}

/** A repeatable flag; its variable separates values by commas or spaces. */
export function listOption<T>(
  row: OptionRow & Required<Omit<ValueParser<T>, "default" | "shownDefault">>,
): Option<T[]> {
  return {
    ...row,
    kind: "list",
    values: `${row.values}; repeatable, the variable separated by commas`,
    shownDefault: "none",
    read: (given) => given.map(row.parse),
  };
}

/** A whole number within `limit`, as the library declares it. */
export function whole(limit: WholeLimit): ValueParser<number> {
  return {
    placeholder: "N",
    values: `${limit.min} to ${limit.max}`,
    default: limit.default,
    parse(raw) {
      const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
      if (!isWithin(limit, value)) {
        throw new InvalidValue(wholeRangeText(limit), raw);
      }
      return value;
    },
  };
}

/** A whole number within `range`, or `undefined` (off) when not given. */
export function optionalWhole(
  range: WholeRange,
  shownDefault: string,
): ValueParser<number | undefined> {
  const { placeholder, values, parse } = whole({ ...range, default: 0 });
  return { placeholder, values, default: undefined, shownDefault, parse };
}

/** One of `choices` (`a, b or c`), shown as `placeholder`. */
export function oneOf<const C extends string>(
  placeholder: string,
  choices: readonly C[],
  fallback: NoInfer<C>,
): ValueParser<C> {
  const words = `${choices.slice(0, -1).join(", ")} or ${choices.at(-1)}`;
  return {
    placeholder,
    values: words,
    default: fallback,
    parse(raw) {
      if (!(choices as readonly string[]).includes(raw)) {
        throw new InvalidValue(`must be ${words}`, raw);
      }
      return raw as C;
    },
  };
}

/** Any text, or (`nonEmpty`) any but the empty one. */
export function text(
  placeholder: string,
  fallback: string,
  nonEmpty = false,
): ValueParser<string> {
  return {
    placeholder,
    default: fallback,
    parse(raw) {
      if (nonEmpty && raw === "") {
        throw new InvalidValue("must not be empty", raw);
      }
      return raw;
    },
  };
}

export type OptionTable = Readonly<Record<string, Option<unknown>>>;

export type OptionValues<Table extends OptionTable> = {
  -readonly [K in keyof Table]: Table[K] extends Option<infer T> ? T : never;
};

/** `main.ts` takes flags (falling back on `fallback` variables); `serve.ts` only `serve` variables. */
export type Entry = "start" | "serve";

function readsVariable(entry: Entry, option: OptionRow): boolean {
  return entry === "serve"
    ? option.variable?.serve === true
    : option.variable?.fallback === true;
}

/** `args` without a leading `--`, which `deno task start -- --help` (as typed for npm) passes on. */
export const flagArgs = (args: string[]): string[] =>
  args[0] === "--" ? args.slice(1) : args;

function parsedFlags(
  table: OptionTable,
  args: string[],
): Record<string, string | boolean | (string | boolean)[] | undefined> {
  const options: ParseArgsOptionsConfig = {};
  for (const option of Object.values(table)) {
    options[option.flag] = option.kind === "switch"
      ? { type: "boolean" }
      : { type: "string", multiple: true };
  }
  try {
    return parseArgs({
      args: flagArgs(args),
      options,
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // node:util's messages run over several lines; the program says one.
    throw new UsageError((error as Error).message.replaceAll("\n", " "));
  }
}

/** Reads every option from `args`, else from `env` if `entry` reads it, else its default. */
export function readOptions<Table extends OptionTable>(
  table: Table,
  entry: Entry,
  args: string[],
  env: (name: string) => string | undefined,
): OptionValues<Table> {
  const flags = entry === "start" ? parsedFlags(table, args) : {};
  const values: Record<string, unknown> = {};
  for (const [key, option] of Object.entries(table)) {
    const flag = flags[option.flag];
    let source = `--${option.flag}`;
    let given: string[] = [];
    if (flag !== undefined) {
      // A switch given is true; a value option's flag is a list of strings.
      given = [flag].flat().map((value) =>
        value === true ? "1" : String(value)
      );
    } else if (option.variable && readsVariable(entry, option)) {
      const raw = env(option.variable.name);
      if (raw !== undefined) {
        source = option.variable.name;
        given = option.kind === "list"
          ? raw.split(/[\s,]+/).filter(Boolean)
          : [raw];
      }
    }
    try {
      values[key] = option.read(given);
    } catch (error) {
      if (!(error instanceof InvalidValue)) throw error;
      // Quoted as JSON, so a line break in the value stays on the one line.
      throw new UsageError(
        `${source} ${error.message} (got ${JSON.stringify(error.raw)})`,
      );
    }
  }
  return values as OptionValues<Table>;
}

function flagText(option: Option<unknown>): string {
  return option.placeholder
    ? `--${option.flag}=${option.placeholder}`
    : `--${option.flag}`;
}

/** `text` in lines of at most `width` characters, broken at spaces; a longer word stands alone. */
const wrap = (text: string, width: number): string[] =>
  text.match(new RegExp(`\\S.{0,${width - 1}}(?= |$)|\\S+`, "g")) ?? [""];

const HELP_WIDTH = 80;
const HELP_COLUMN = 28;

function flagsHelp(table: OptionTable): string {
  const lines: string[] = [];
  for (const option of Object.values(table)) {
    const shown = option.variable?.fallback
      ? `$${option.variable.name}, else ${option.shownDefault}`
      : option.shownDefault;
    const details = option.kind === "switch"
      ? ""
      : ` (${[option.values, `default: ${shown}`].filter(Boolean).join("; ")})`;
    const [first, ...rest] = wrap(
      `${option.help}${details}`,
      HELP_WIDTH - HELP_COLUMN,
    );
    const head = `  ${flagText(option)}`;
    if (head.length < HELP_COLUMN) {
      lines.push(`${head.padEnd(HELP_COLUMN)}${first}`);
    } else {
      lines.push(head, `${" ".repeat(HELP_COLUMN)}${first}`);
    }
    for (const line of rest) lines.push(`${" ".repeat(HELP_COLUMN)}${line}`);
  }
  return lines.join("\n");
}

/** `--help`: `intro`, every flag, then the variables `deno serve` reads. */
export function helpText(table: OptionTable, intro: string): string {
  const variables = wrap(
    `Under deno serve (serve.ts, deno task serve:parallel), which takes no flags, these variables stand for their flags: ${
      variablesOf(table, "serve").join(", ")
    }. A switch's variable is 1 or 0.`,
    HELP_WIDTH,
  );
  return `${intro}\n\nFlags:\n${flagsHelp(table)}\n\n${variables.join("\n")}\n`;
}

/** The names of the variables `entry` reads, in the table's order. */
export function variablesOf(table: OptionTable, entry: Entry): string[] {
  return Object.values(table).filter((option) => readsVariable(entry, option))
    .map((option) => option.variable!.name);
}

const cell = (text: string) => text.replaceAll("|", "\\|");
const code = (text: string) => `\`${cell(text)}\``;

/** The table as Markdown, for the docs. */
export function optionsMarkdown(table: OptionTable): string {
  const rows = [
    "| Flag | Variable | Read by | Default | Values | What it does |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const option of Object.values(table)) {
    const variable = option.variable;
    const readBy = [
      variable?.serve ? "`deno serve`" : "",
      variable?.fallback ? "`main.ts`, without the flag" : "",
    ].filter(Boolean).join("; ");
    rows.push(
      `| ${
        [
          code(flagText(option)),
          variable ? code(variable.name) : "",
          readBy,
          cell(option.shownDefault),
          cell(option.values ?? ""),
          cell(option.help),
        ].join(" | ")
      } |`,
    );
  }
  return rows.join("\n");
}
