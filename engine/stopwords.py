"""Words too common to say which note to open, in the two languages a fleet writes.

The closed classes, done whole, in English and Portuguese (accents already folded):
articles, pronouns and possessives, auxiliaries and modals, prepositions and their
contractions, conjunctions, question words, discourse particles, and generic adjectives
and ordinals. Content words stay out however common they are: a stopword list that grows
by frequency ends up deleting the subject of somebody's question.
"""

from __future__ import annotations

_ENGLISH = """
a an the
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves one ones
this that these those there here someone somebody something anyone anybody anything
everyone everybody everything nobody nothing none each every either neither both all any
some such other another own same
am is are was were be been being have has had having do does did doing done
will would shall should can could may might must ought need dare let get got gets getting
isn aren wasn weren hasn haven hadn doesn don didn won wouldn shan shouldn cant couldn mightn
mustn needn im ive id ill youre youve youd youll hes shes its were theyre theyve theyd
theyll thats whats whos wheres whens whys hows lets
of in on at by for with about against between into through during before after above
below to from up down out off over under upon onto within without along across behind
beyond near toward towards per via among amongst around past since until till than
and or but nor so yet if then else because as while although though unless whether
whereas also too either
what which who whom whose when where why how
just only very really quite rather even still already again ever never always often
sometimes maybe perhaps please yes no not ok okay oh well like more most less least much
many few lot lots bit kind sort thing things way etc eg ie vs
new old good bad best better worst worse big small great little first second third last
next previous other same different certain whole main
"""

_PORTUGUESE = """
o a os as um uma uns umas
eu me mim meu meus minha minhas tu te ti teu teus tua tuas voce voces ele ela eles elas
lhe lhes nos nosso nossos nossa nossas vos vosso vossa seu seus sua suas dele dela deles
delas isto isso aquilo este esta estes estas esse essa esses essas aquele aquela aqueles
aquelas algo alguem ninguem nada tudo todo toda todos todas cada algum alguma alguns
algumas nenhum nenhuma outro outra outros outras mesmo mesma mesmos mesmas proprio propria
se si consigo comigo contigo conosco
ser sou es e somos sao era eras eramos eram fui foi fomos foram seja sejam sera serao seria
estar estou esta estamos estao estava estavam esteve estiveram estiver estaria
ter tenho tem temos tinha tinham teve tiveram tera teria tenha tenham
haver ha havia houve havera
ir vou vai vamos vao ia iam
poder posso pode podem podemos podia poderia possa possam
dever devo deve devem devemos devia deveria
fazer faco faz fazem fazemos fez fazia
querer quero quer querem queria
de do da dos das em no na nos nas num numa por pelo pela pelos pelas para pra pro pras
pros com sem sob sobre entre ate desde contra perante apos ante ao aos a as dum duma
neste nesta nesse nessa naquele naquela deste desta desse dessa daquele daquela
e ou mas nem porem todavia contudo entao pois porque porquanto que se caso como quando
enquanto embora conforme logo portanto
quem qual quais quanto quanta quantos quantas onde aonde quando como porque por que
ja ainda so apenas tambem muito muita muitos muitas pouco pouca poucos poucas mais menos
bem mal sempre nunca talvez sim nao la ca aqui ali ai tipo coisa coisas jeito
novo nova novos novas velho velha bom boa bons boas melhor melhores pior piores grande
grandes pequeno pequena primeiro primeira primeiros primeiras segundo segunda terceiro ultimo
ultima ultimos ultimas
proximo proxima proximos proximas
"""

# "new" and "best" live here on purpose: "qual a melhor frequencia" asks about frequency,
# and "melhor" would otherwise tie every note that calls itself the best anything.
STOPWORDS: frozenset[str] = frozenset((_ENGLISH + _PORTUGUESE).split())
