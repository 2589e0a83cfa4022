// The Node entry point: everything of the main entry, with Dawn (npm package `webgpu`) as the
// default device.
/// <reference types="@webgpu/types" />
export * from './index.js';
/** Dawn's GPU object; options are Dawn toggles such as 'enable-dawn-features=...'. */
export function nodeGpu(options?: string[]): GPU;
