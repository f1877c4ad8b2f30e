// How a new LoRA adapter's A starts: the choices --lora-init-a takes. Kept apart from model/lora.ts,
// which builds adapters and imports TensorFlow.js, so that usage text names them without loading it.

/**
 * kaiming-uniform: PEFT's default. orthogonal: A's rows (or columns, when r > in) orthonormal and
 * scaled by 1/scaling, so scaling·B·A moves W by exactly B's update rotated (Saxe et al. 2013,
 * arXiv:1312.6120, for orthogonal init). Paired with a frozen A (LoRA-FA, Zhang et al. 2023,
 * arXiv:2308.03303) and r = in, training B is full fine-tuning of W in a rotated basis.
 */
export const loraInitAs = ['kaiming-uniform', 'orthogonal'] as const;
export type LoraInitA = (typeof loraInitAs)[number];
