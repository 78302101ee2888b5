"""Words too common to say which note to open, in the two languages a fleet writes.

This is the specification's reference list, word for word, and nothing more: the closed
classes (articles, pronouns and possessives, auxiliaries and modals, prepositions and their
contractions, conjunctions, question words, a few particles) and a short run of generic
adjectives, in English and then Portuguese (accents already folded). It is exact on purpose:
every keyword score depends on it, and one word more or less moves the printed figures. `much`,
`per`, `primeiros` and `pra` are content words here and score; a list that grows by frequency
ends up deleting the subject of somebody's question. Words listed twice in the reference
(`as`, `me`, `no`, `so`, `real`) are one entry of the set.
"""

from __future__ import annotations

_ENGLISH = """
the a an is are was were am be been being do does did have has had will would can could
should shall may might must i we you he she it they them me us him her my our your his its
their mine ours yours theirs this that these those of to in on for with as at by from up out
off over under into about after before between through and or but if so not no yes what how
who when where why which than then there here just also too very now let lets like own some
any all more most
"""

_PORTUGUESE = """
o os as um uma uns umas de da do das dos em no na nos nas para por com sem ao aos pelo pela
pelos pelas num numa ate entre sobre eu voce voces ele ela eles elas te me mim lhe meu minha
meus minhas seu sua seus suas nosso nossa nossos nossas teu tua isso isto aquilo esse essa
esses essas este esta estes estas ser sou era foi sao estou estao estava ter tem tenho tinha
vou vai vamos pode posso podemos deve devo fazer faz quero quer dar e ou mas se que qual
quais como quem quanto quanta quantos quantas quando onde porque nao sim ja la mais menos
muito muita muitos muitas tambem ai so apenas ainda agora hoje tudo todo toda todos todas
outro outra entao assim aqui ali
"""

# The reference's run of generic adjectives: English words, though the reference lists them
# in its Portuguese block (they count toward English when telling a text's language).
_ADJECTIVES = """
new old first last next small big large good bad best worst high low long short full real true false
"""

_PORTUGUESE_ADJECTIVES = """
novo nova novos novas velho velha primeiro primeira
ultimo ultima proximo proxima pequeno pequena grande grandes bom boa ruim melhor pior alto
alta baixo baixa longo curto cheio vazio real certo errado
"""

STOPWORDS: frozenset[str] = frozenset((_ENGLISH + _PORTUGUESE + _ADJECTIVES + _PORTUGUESE_ADJECTIVES).split())

# Each language's share of a text's stopwords says which language it is written in
# (engine/rank/stemming.py); a word both lists hold (`as`, `me`, `no`, `so`) counts for both.
ENGLISH_STOPWORDS: frozenset[str] = frozenset((_ENGLISH + _ADJECTIVES).split())
PORTUGUESE_STOPWORDS: frozenset[str] = frozenset((_PORTUGUESE + _PORTUGUESE_ADJECTIVES).split())
