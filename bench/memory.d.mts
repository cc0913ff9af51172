// Types for memory.mjs, which plain node runs in the bare proxy's and Portkey's arms.
export function answerMemory(msg: unknown): void;
