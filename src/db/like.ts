// LIKE patterns from user text: the user's % and _ are literal characters, not wildcards.
const escapeLike = (text: string) => text.replace(/[\\%_]/g, '\\$&');

export const containsPattern = (text: string) => `%${escapeLike(text)}%`;
