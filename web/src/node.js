// Node entry point: the package's faces with Dawn's Node bindings (the npm package `webgpu`)
// as the default device. VK_ICD_FILENAMES picks the Vulkan driver (e.g. SwiftShader's ICD).
import { create, globals } from 'webgpu';
import { requestDevice, setDefaultDeviceFactory } from './index.js';

export * from './index.js';

let gpu = null;
/** Dawn's GPU object (navigator.gpu's equivalent); options are Dawn toggles, e.g. 'enable-dawn-features=...'. */
export function nodeGpu(options = []) {
  if (!gpu) {
    Object.assign(globalThis, globals);
    gpu = create(options);
  }
  return gpu;
}

setDefaultDeviceFactory(() => requestDevice(nodeGpu()));
