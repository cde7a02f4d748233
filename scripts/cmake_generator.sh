# Sourced by build.sh and sanitize.sh. cmake_generator DIR prints the
# generator option for a build tree: Ninja for a new tree (it keeps both
# cores busy across targets, where make idles between them), nothing for a
# tree configured before, which keeps its generator (CMake refuses to
# switch one).
cmake_generator() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    echo "-G Ninja"
  fi
}
