/** The contract's two entries refusing a quote's format, as the tests expect them. */

/** The quote does not start with A-Z. */
export const START = {
  location: "body",
  name: "quote",
  description: "Does not start with a majuscule",
};

/** The quote does not end in `.`, `?` or `!`. */
export const END = {
  location: "body",
  name: "quote",
  description: "Does not end properly",
};
