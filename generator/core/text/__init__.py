"""Text as a reader reads it: characters, numbers, words and verdicts, shared by the checker and
the renderer. It reads storage (generator.storage) and nothing else of the package.

Modules: `characters` (what a reader cannot see and letters that look like others, from the
Unicode data: the canonical text every word rule reads), `numerals` (every spelling of a number a
reader reads), `number_words` (the number words of every language it reads), `numeral_values`
(a numeral's value), `quoted_numerals` (whether a numeral lies inside a design quote), `lexicon`
(the words a text asserts with, by class, one data file per language in generator/core/text/lexicons/,
and where they match a text, remembered), `verdicts` (a release verdict
recognised in any spelling, and the languages the ledger declares) and `wording` (the words and
label rules the checker and the renderer share).
"""
