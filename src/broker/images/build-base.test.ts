import {describe, expect, it} from 'vitest'
import {BASE_RECIPE, baseImageTag, recipeHash} from './base-recipe.js'
import {debianMirror, defaultCacheDir} from './build-base.js'

describe('agent base image', () => {
  it('the tag carries the suite and a hash of the recipe: a changed recipe is a new image', () => {
    expect(baseImageTag()).toMatch(/^localhost\/svc-agent-base:bookworm-[0-9a-f]{12}$/)
    expect(recipeHash({...BASE_RECIPE, packages: [...BASE_RECIPE.packages, 'curl']})).not.toBe(recipeHash())
    expect(BASE_RECIPE.packages).toEqual(expect.arrayContaining(['tmux', 'git', 'ca-certificates']))
  })

  it('the mirror comes from the host apt sources for the suite (deb822 or one-line), never security or third-party ones', () => {
    const deb822 = {
      name: '/etc/apt/sources.list.d/debian.sources',
      text: 'Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb\n# snapshot\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n',
    }
    const nodesource = {name: '/etc/apt/sources.list.d/nodesource.sources', text: 'Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n'}
    expect(debianMirror('bookworm', [nodesource, deb822])).toBe('http://mirror.example/debian')
    expect(debianMirror('bookworm', [{name: '/etc/apt/sources.list', text: '# x\ndeb [arch=amd64] http://ftp.example/debian bookworm main\n'}])).toBe('http://ftp.example/debian')
    expect(debianMirror('bookworm', [{name: '/etc/apt/sources.list', text: 'deb http://ftp.example/debian bullseye main\n'}])).toBeUndefined()
  })

  it('the tar cache lives under XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultCacheDir({XDG_CACHE_HOME: '/c'})).toBe('/c/svc/images')
    expect(defaultCacheDir({HOME: '/h'})).toBe('/h/.cache/svc/images')
  })
})
