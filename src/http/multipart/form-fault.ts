/** A fault in a multipart form itself: the client's to fix, reported as a 400 with this message. */
export class FormFault extends Error {}
