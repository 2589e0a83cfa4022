# cmake -DNPM=npm -DDIR=web -P npm_ci_once.cmake: `npm ci` in DIR unless node_modules was installed
# from the same package-lock.json (a copy of it is kept in node_modules after each install).
# --prefer-offline: npm's cache serves the packages once they have been fetched.
set(lock "${DIR}/package-lock.json")
set(stamp "${DIR}/node_modules/.gpusort-installed-lock.json")
if(EXISTS "${stamp}")
  file(SHA256 "${lock}" lock_hash)
  file(SHA256 "${stamp}" stamp_hash)
  if(lock_hash STREQUAL stamp_hash)
    message(STATUS "web/node_modules matches package-lock.json: no npm ci")
    return()
  endif()
endif()
execute_process(COMMAND "${NPM}" ci --no-audit --no-fund --prefer-offline WORKING_DIRECTORY "${DIR}"
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "npm ci in ${DIR} failed (${result}): the npm registry or npm's cache must hold the packages of package-lock.json")
endif()
file(COPY_FILE "${lock}" "${stamp}")
