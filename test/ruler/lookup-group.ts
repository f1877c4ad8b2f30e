// Fixture: a typical RULER group. Eight attempts at one multi-hop lookup question ("founding year of
// the university where the author of The Remains of the Day took his first degree") by an agent with
// search / read / answer tools: clean successes, a detour, the UEA trap (his MA, not his first degree),
// a guess without checking, a give-up. Used by the RULER tests and by bench/ruler.ts.
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';

export interface LookupTrajectory {
  readonly id: string;
  readonly messages: ChatMessage[];
  /** What this attempt is, for test names and the double's scoring. */
  readonly kind: string;
}

export const lookupTools: ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'search_wiki',
      description:
        'Full-text search over an encyclopedia snapshot. Returns up to 5 titles with a snippet each.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'Search words' } },
        required: ['query'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_page',
      description: 'Returns the opening sections of an encyclopedia page, by exact title.',
      parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    },
  },
];

const SYSTEM = `You are a research assistant that answers factual questions using an encyclopedia snapshot.

Rules:
1. Use search_wiki to find candidate pages and read_page to read them. Never answer from memory alone: every fact in your answer must be supported by a page you read in this conversation.
2. Questions often need several hops (person → place → date). Resolve each hop explicitly before moving on, and say which page supports it.
3. Be economical: do not repeat a search you already ran, and do not read pages that the snippets already rule out.
4. If the snapshot does not contain the answer after a reasonable search, say so plainly instead of guessing.
5. Finish with one line of the form "Answer: <answer>" followed by one line "Sources: <page titles>".
Today's date is 2026-03-14. The snapshot was taken on 2026-01-01.`;

const QUESTION =
  'In which year was the university founded where the author of "The Remains of the Day" completed his undergraduate degree?';

const PAGES = {
  novel: `The Remains of the Day is a 1989 novel by the Nobel Prize-winning British author Kazuo Ishiguro. The protagonist, Stevens, is a butler with a long record of service at Darlington Hall, a country house near Oxford. The novel won the Booker Prize for Fiction in 1989 and was adapted into a 1993 film starring Anthony Hopkins and Emma Thompson.`,
  author: `Sir Kazuo Ishiguro (born 8 November 1954) is a Japanese-born British novelist, screenwriter and short-story writer. He was born in Nagasaki and moved to Britain in 1960. Education: Ishiguro attended Stoughton Primary School and Woking County Grammar School in Surrey. He graduated from the University of Kent with a bachelor's degree in English and Philosophy in 1978, and in 1980 he completed a Master of Arts in creative writing at the University of East Anglia, where he studied under Malcolm Bradbury and Angela Carter. He received the Nobel Prize in Literature in 2017.`,
  kent: `The University of Kent is a semi-collegiate public research university based in Kent, United Kingdom. It was granted its Royal Charter on 4 January 1965 and the following year Princess Marina, Duchess of Kent, was formally installed as the first Chancellor. The university has its main campus north of Canterbury, situated within 600 acres of parkland, and further campuses in Medway and Tonbridge.`,
  uea: `The University of East Anglia (UEA) is a public research university in Norwich, England. Established in 1963 on a 320-acre campus west of the city centre, the university has four faculties and 26 schools of study. Its creative writing MA, founded in 1970 by Malcolm Bradbury and Angus Wilson, is among the best known in the world.`,
} as const;

const SEARCH_NOVEL = `1. The Remains of the Day — "…a 1989 novel by the Nobel Prize-winning British author Kazuo Ishiguro…"
2. The Remains of the Day (film) — "…1993 film adaptation of the novel by Kazuo Ishiguro…"
3. Booker Prize — "…1989: Kazuo Ishiguro, The Remains of the Day…"
4. Darlington Hall (fictional) — "…the country house in The Remains of the Day…"`;

const SEARCH_AUTHOR = `1. Kazuo Ishiguro — "…graduated from the University of Kent with a bachelor's degree in English and Philosophy in 1978…"
2. Kazuo Ishiguro bibliography — "…novels, short stories and screenplays by Kazuo Ishiguro…"
3. University of East Anglia — "…alumni include Kazuo Ishiguro (MA Creative Writing, 1980)…"`;

let callCounter = 0;
function call(name: string, args: Record<string, string>): { message: ChatMessage; id: string } {
  const id = `call_${(++callCounter).toString(36).padStart(6, '0')}`;
  return {
    id,
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    },
  };
}

/** A tool call and its result, as two messages. */
function step(name: string, args: Record<string, string>, result: string): ChatMessage[] {
  const { message, id } = call(name, args);
  return [message, { role: 'tool', tool_call_id: id, content: result }];
}

const say = (content: string): ChatMessage => ({ role: 'assistant', content });

/** The eight attempts, each starting with the same system prompt and question. */
export function lookupGroup(): LookupTrajectory[] {
  callCounter = 0;
  const prefix: ChatMessage[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: QUESTION },
  ];
  const attempts: [string, ChatMessage[]][] = [
    [
      'correct, three hops',
      [
        ...step('search_wiki', { query: 'The Remains of the Day author' }, SEARCH_NOVEL),
        ...step('read_page', { title: 'Kazuo Ishiguro' }, PAGES.author),
        ...step('read_page', { title: 'University of Kent' }, PAGES.kent),
        say(
          "The Remains of the Day was written by Kazuo Ishiguro (The Remains of the Day). He took his bachelor's degree at the University of Kent in 1978 (Kazuo Ishiguro), which received its Royal Charter in 1965 (University of Kent).\nAnswer: 1965\nSources: The Remains of the Day; Kazuo Ishiguro; University of Kent",
        ),
      ],
    ],
    [
      'correct, with a redundant search',
      [
        ...step('search_wiki', { query: 'Remains of the Day novel' }, SEARCH_NOVEL),
        ...step('search_wiki', { query: 'Kazuo Ishiguro education' }, SEARCH_AUTHOR),
        ...step('search_wiki', { query: 'Kazuo Ishiguro university' }, SEARCH_AUTHOR),
        ...step('read_page', { title: 'Kazuo Ishiguro' }, PAGES.author),
        ...step('read_page', { title: 'University of Kent' }, PAGES.kent),
        say(
          'Kazuo Ishiguro wrote the novel. His undergraduate degree was from the University of Kent (1978), founded by Royal Charter in 1965.\nAnswer: 1965\nSources: Kazuo Ishiguro; University of Kent',
        ),
      ],
    ],
    [
      'wrong: took the MA university (UEA)',
      [
        ...step('search_wiki', { query: 'The Remains of the Day' }, SEARCH_NOVEL),
        ...step('read_page', { title: 'Kazuo Ishiguro' }, PAGES.author),
        ...step('read_page', { title: 'University of East Anglia' }, PAGES.uea),
        say(
          'Ishiguro studied creative writing at the University of East Anglia, established in 1963.\nAnswer: 1963\nSources: Kazuo Ishiguro; University of East Anglia',
        ),
      ],
    ],
    [
      'guessed the founding year without reading the university page',
      [
        ...step('search_wiki', { query: 'Remains of the Day Ishiguro degree' }, SEARCH_AUTHOR),
        say(
          'Ishiguro graduated from the University of Kent. The University of Kent was founded in 1962.\nAnswer: 1962\nSources: Kazuo Ishiguro',
        ),
      ],
    ],
    [
      'gave up after one search',
      [
        ...step('search_wiki', { query: 'university founded Remains of the Day' }, 'No results.'),
        say('I could not find this in the snapshot.\nAnswer: unknown\nSources: none'),
      ],
    ],
    [
      'correct, but missing the Sources line',
      [
        ...step('search_wiki', { query: 'Kazuo Ishiguro' }, SEARCH_AUTHOR),
        ...step('read_page', { title: 'Kazuo Ishiguro' }, PAGES.author),
        ...step('read_page', { title: 'University of Kent' }, PAGES.kent),
        say(
          'Ishiguro (author of the novel) graduated from Kent in 1978; Kent was chartered in 1965.\nAnswer: 1965',
        ),
      ],
    ],
    [
      'read both universities, answered correctly',
      [
        ...step('search_wiki', { query: 'The Remains of the Day author' }, SEARCH_NOVEL),
        ...step('read_page', { title: 'Kazuo Ishiguro' }, PAGES.author),
        ...step('read_page', { title: 'University of East Anglia' }, PAGES.uea),
        ...step('read_page', { title: 'University of Kent' }, PAGES.kent),
        say(
          "Ishiguro's undergraduate degree (1978) is from the University of Kent; East Anglia was his MA. Kent received its Royal Charter in 1965.\nAnswer: 1965\nSources: Kazuo Ishiguro; University of Kent",
        ),
      ],
    ],
    [
      'tool error ignored, answered from memory',
      [
        ...step(
          'read_page',
          { title: 'Ishiguro' },
          'Error: no page titled "Ishiguro". Did you mean "Kazuo Ishiguro"?',
        ),
        say('The author studied at Kent, which was founded in 1965.\nAnswer: 1965\nSources: Kazuo Ishiguro'),
      ],
    ],
  ];
  return attempts.map(([kind, rest], index) => ({
    id: `7f3c2a10-5b8e-4d21-9c6a-${(index + 1).toString().padStart(12, '0')}`,
    kind,
    messages: [...prefix, ...rest],
  }));
}
