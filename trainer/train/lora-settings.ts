// The LoRA shape the trainer creates or loads (rank, scale, dropout, targets, A's start), as the zod
// slice of the train config. model/lora.ts checks the same values again when it builds an adapter.
import { z } from 'zod';
import { type Projection, projections } from '../../model/hf-config.ts';
import { loraInitAs } from '../../model/lora-init-a.ts';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween, numberWhere, oneOf } from '../../protocol/config-fields.ts';

const section = 'LoRA';

const targets = z
  .array(z.string(), { error: 'must be a list of projections' })
  .superRefine((names, context) => {
    const unknown = names.filter((name) => !(projections as readonly string[]).includes(name));
    if (names.length === 0 || unknown.length > 0) {
      context.addIssue({
        code: 'custom',
        message: `${unknown.length > 0 ? `has unknown projection(s) ${unknown.join(', ')}` : 'is empty'}; choose from ${projections.join(', ')}`,
      });
    }
  })
  .transform((names) => names as Projection[]);

export const loraSettingsSchema = z
  .strictObject({
    r: documented(intBetween(1, 4096).default(8), {
      doc: 'LoRA rank r',
      source: "PEFT's LoraConfig default",
      flag: 'lora-rank',
      arg: 'N',
      section,
    }),
    alpha: documented(numberWhere((alpha) => alpha > 0 && Number.isFinite(alpha), '> 0').default(8), {
      doc: 'scale numerator: the update is multiplied by alpha / r',
      source: "PEFT's default (scale 1)",
      flag: 'lora-alpha',
      arg: 'X',
      section,
    }),
    dropout: documented(numberWhere((dropout) => dropout >= 0 && dropout < 1, 'in [0, 1)').default(0), {
      doc: 'dropout on the adapter input while training',
      source: "PEFT's default",
    }),
    targets: documented(targets.default([...projections]), {
      doc: 'adapted projections, comma-separated',
      shownDefault: `all: ${projections.join(',')}`,
      source:
        "ART's default target modules, and QLoRA's finding that adapting every linear layer is what matches full fine-tuning (arXiv:2305.14314 §4)",
      flag: 'lora-targets',
      arg: 'LIST',
      section,
    }),
    useRslora: documented(z.boolean().default(false), {
      doc: 'rank-stabilised scale alpha / √r (rsLoRA, arXiv:2312.03732) instead of alpha / r',
      source: "PEFT's default",
    }),
    initA: documented(oneOf(loraInitAs).default('kaiming-uniform'), {
      doc: "how a new adapter's A starts",
      source: "PEFT's",
      flag: 'lora-init-a',
      arg: 'NAME',
      section,
    }),
    freezeA: documented(z.boolean().default(false), {
      doc: 'train B only, with A kept as initialised or loaded (LoRA-FA, arXiv:2308.03303)',
      flagDoc:
        'train B only (LoRA-FA); with orthogonal A and rank = hidden size this is full fine-tuning of each projection in a rotated basis',
      flag: 'lora-freeze-a',
      sets: true,
      section,
    }),
  })
  .prefault({});

export type LoraShape = z.output<typeof loraSettingsSchema>;
