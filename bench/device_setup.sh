# Sourced by the scripts that run on the GPU machine, from their staged folder .devrun/<name>/:
# sets root (the repository copy holding .gl and .devrun) and out (the folder the environment
# variable RESULTS_DIR names, else ./out beside the script), and gives a machine without a Vulkan loader
# one from the Debian packages in .gl/ (libvulkan1), with the NVIDIA driver's manifest.
root=$(cd "$here/../.." && pwd)
out=${RESULTS_DIR:-$here/out}
mkdir -p "$out"
if [ -d "$root/.gl" ]; then
  for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
