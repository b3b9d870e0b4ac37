// LIKE patterns from user text: the user's % and _ are literal characters, not wildcards.
import { sql, type RawBuilder } from 'kysely';

const escapeLike = (text: string) => text.replace(/[\\%_]/g, '\\$&');

export const containsPattern = (text: string) => `%${escapeLike(text)}%`;

/**
 * The pattern for a text kept folded (lower(), as ILIKE folds it): folded by PostgreSQL too, so that it folds the
 * pattern as it folded the text, and LIKE then matches what ILIKE would.
 */
export const foldedContainsPattern = (text: string): RawBuilder<string> => sql<string>`lower(${containsPattern(text)})`;
