/** A command line that cannot be run as written: reported with the usage text, exit code 2. */
export class UsageError extends Error {}
